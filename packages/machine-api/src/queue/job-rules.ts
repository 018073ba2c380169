/** Two rules of the queue's requests: who may manage a job, and the constraints as kept. */

import { MissingScope } from '../access/errors.js';
import { type Actor, mayManageJob } from '../access/scopes.js';
import type { Job, QueueConstraints } from '../jobs/job.js';

/** A `print` key manages only its own jobs; `control` manages anyone's. */
export function assertMayManage(actor: Actor, job: Job, what: string): void {
  if (mayManageJob(actor, job.owner)) return;
  throw new MissingScope(
    `job ${job.id} was submitted by ${job.owner === null ? 'no key' : `the key "${job.owner}"`}; ${what} another key's job needs the "control" scope`,
  );
}

/** Drops duplicate machine ids; keeps only the keys that constrain. */
export function normalised(constraints: QueueConstraints): QueueConstraints {
  return {
    ...(constraints.machine_ids ? { machine_ids: [...new Set(constraints.machine_ids)] } : {}),
    ...(constraints.material !== undefined ? { material: constraints.material } : {}),
    ...(constraints.nozzle_diameter !== undefined ? { nozzle_diameter: constraints.nozzle_diameter } : {}),
    ...(constraints.machine_type !== undefined ? { machine_type: constraints.machine_type } : {}),
  };
}
