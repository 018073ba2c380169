/**
 * A dispatch round's routing: whether a job fits a machine now (the spool counted), and the round's
 * claims (queue.ts: each free machine takes the first waiting job it fits, in queue order, exactly once
 * across the farm).
 */

import type { Job } from '../jobs/job.js';
import type { JobStore } from '../jobs/store.js';
import type { MachineRegistry, RegisteredMachine } from '../machines/registry.js';
import { candidates, gramsOf, type MachineFacts } from './routing.js';

/** Whether the machine can take the job now, its spool counted. */
export function fitsMachine(fact: MachineFacts, job: Job): boolean {
  return candidates([fact], job.constraints ?? {}, job.parameters.design ?? null, gramsOf(job)).length === 1;
}

/**
 * Claims, for the free machines, the waiting jobs they fit: each job in queue order goes to the first free
 * machine it fits; the claim takes that job or, when another instance took or is taking it, the next one
 * the machine fits (JobStore.claimFirst). Returns the claimed jobs with their machines.
 */
export async function claimJobs(options: {
  store: JobStore;
  machines: MachineRegistry;
  waiting: readonly Job[];
  free: readonly { id: string }[];
  fits: (job: Job, machineId: string) => boolean;
  stopped: () => boolean;
}): Promise<{ job: Job; entry: RegisteredMachine }[]> {
  const { store, machines, waiting, free, fits, stopped } = options;
  const taken = new Set<string>();
  const claimedJobs = new Set<string>();
  const claims: { job: Job; entry: RegisteredMachine }[] = [];
  for (const [index, job] of waiting.entries()) {
    if (taken.size === free.length || stopped()) break;
    if (claimedJobs.has(job.id)) continue;
    const target = free.find((machine) => !taken.has(machine.id) && fits(job, machine.id));
    const entry = target && machines.get(target.id);
    if (!entry) continue;
    const next = waiting
      .slice(index)
      .filter((other) => !claimedJobs.has(other.id) && fits(other, entry.id))
      .map((other) => other.id);
    const claimed = await store.claimFirst(next, entry.id);
    if (!claimed) continue;
    taken.add(entry.id);
    claimedJobs.add(claimed.id);
    claims.push({ job: claimed, entry });
  }
  return claims;
}
