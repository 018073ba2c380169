/**
 * Sends an uploaded design to an OctoPrint target: one machine through the job runner (prints now, or
 * `409 MachineBusy`), or the farm queue when the service has one (waits for a matching machine).
 */

import { ServiceError } from '../errors.js';
import type { Job } from '../jobs/job.js';
import type { JobRunner, Upload } from '../jobs/runner.js';
import type { OctoPrintTarget, QueueConstraints } from './base-url.js';
import type { SubmitPrint } from './stored-files.js';

/** The part of the farm queue the OctoPrint base `/octoprint/queue/` needs. */
export interface QueueSubmitter {
  submit(
    upload: Upload,
    submission: { jobName: string; constraints: QueueConstraints; priority: number },
    owner: string | null,
  ): Promise<Job>;
}

/** The queue base answers this while the service runs without a farm queue. */
export class QueueUnavailable extends ServiceError {
  constructor() {
    super(
      501,
      'NotSupported',
      'this service has no farm queue; use a machine base URL, /octoprint/{machine_id}/',
    );
  }
}

export function printSubmitter(jobs: JobRunner, queue: QueueSubmitter | undefined): SubmitPrint {
  return (upload: Upload, target: OctoPrintTarget, jobName: string, owner: string | null) => {
    if (target.kind === 'machine') {
      return jobs.submit(upload, { machine_id: target.machineId, job_name: jobName }, owner);
    }
    if (!queue) throw new QueueUnavailable();
    return queue.submit(upload, { jobName, constraints: target.constraints, priority: 0 }, owner);
  };
}
