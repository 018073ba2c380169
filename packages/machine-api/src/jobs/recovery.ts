/**
 * What a start does about the previous run of this instance (a clean stop, a crash or `kill -9`): queue
 * jobs claimed for its machines but not handed to them yet go back to the queue at their place; a job
 * printing on a printer that prints on by itself (Moonraker, Bambu) stays printing, to be followed
 * again once the machine is connected (runner.ts); other jobs that were in flight on its machines fail
 * with a message (a print that reached a USB or simulated printer died with the process; their beds then
 * await a clear); beds awaiting a clear are restored; a slicer the killed run left is ended and the work
 * files go. Only this instance's machines: on a shared database the other instances' jobs are theirs
 * to judge.
 */

import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { MachineObserver } from '../machines/observer.js';
import type { MachineRegistry } from '../machines/registry.js';
import { killLeftoverSlicer } from '../slicer/prusa.js';
import type { BedStore } from './bed-store.js';
import type { Job } from './job.js';
import type { JobStore } from './store.js';

export interface RecoveryOptions {
  store: JobStore;
  /** Which machines' beds wait for a confirmation that they are clear. */
  beds: BedStore;
  machines: MachineRegistry;
  observer: MachineObserver;
  logger: Logger;
}

export interface Recovered {
  /** Failed jobs that had reached their machine (a killed run left them printing): their machines hold what they printed. */
  interrupted: Job[];
  /** Jobs printing on a printer that prints on by itself (`followAgain`): left printing, to be followed again. */
  printingOn: Job[];
}

/** Recovers, then empties `[workRoot, uploadDir]`. */
export async function recoverJobs(
  options: RecoveryOptions,
  [workRoot, uploadDir]: [string, string],
): Promise<Recovered> {
  const { store, beds, observer, logger, machines } = options;
  const own = machines.machines.map((entry) => entry.id);
  for (const job of await store.returnClaimed(own))
    logger.warn({ job: job.id }, 'queued job claimed before a restart goes back to the queue');
  const followable = (job: Job) =>
    job.status === 'printing' &&
    job.machineId !== null &&
    machines.get(job.machineId)?.machine.followAgain !== undefined;
  const printingOn = (await store.printingOn(own)).filter(followable);
  const interrupted = await store.failUnfinished(own, followable);
  for (const { job, was } of interrupted) {
    logger.warn({ job: job.id, machine: job.machineId }, 'job interrupted by a restart');
    if (job.machineId && (was === 'uploading' || was === 'printing')) {
      await beds.markBedAwaiting(job.machineId, job.updatedAt, job.id);
    }
  }
  for (const bed of await beds.awaitingBeds()) observer.setAwaitingClear(bed.machineId, bed.since);
  // A slicer of a run that was killed (kill -9) keeps running under init: end it before its files go.
  for (const jobDir of await readdir(workRoot).catch(() => [] as string[])) {
    const pid = await killLeftoverSlicer(join(workRoot, jobDir));
    if (pid !== null) logger.warn({ pid, job: jobDir }, 'stopped a slicer left by a previous run');
  }
  await Promise.all([workRoot, uploadDir].map((dir) => rm(dir, { recursive: true, force: true })));
  await Promise.all([workRoot, uploadDir].map((dir) => mkdir(dir, { recursive: true })));
  return {
    interrupted: interrupted.flatMap(({ job }) => (job.machineId && job.printingAt ? [job] : [])),
    printingOn,
  };
}
