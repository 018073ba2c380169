/**
 * What each print used of its spool, turned into use reports (reports.ts): during a print every
 * `report_interval_s` (as Moonraker's spoolman component reports while printing) the estimate scaled by
 * the progress reached, and at the end what the job's filament record says it used. Each report is the
 * difference from what was already recorded for the job, so the reports of a job add up to its use
 * whatever the interval, a restart included (the recorded total is read from the database). A printer
 * count lower than the progress estimate reported before is not taken back (Spoolman keeps the larger).
 *
 * The job's spool is the one recorded on its filament when it started (`spool_id`): a spool changed
 * during the print does not receive the rest of that print's use.
 */

import type { Logger } from 'pino';
import type { JobFilament } from '../jobs/filament.js';
import type { JobStore } from '../jobs/store.js';
import type { SpoolReports } from './reports.js';
import type { SpoolStore } from './store.js';

export interface PrintingJob {
  jobId: string;
  machineId: string;
  /** Percent printed so far. */
  progress: number | null;
}

export interface SpoolUsageOptions {
  jobs: JobStore;
  spools: SpoolStore;
  reports: SpoolReports;
  /** The jobs printing now on this instance's machines. */
  printing: () => PrintingJob[];
  intervalMs: number;
  logger: Logger;
}

export class SpoolUsage {
  /** Every recording runs after the previous one: a delta is computed from a total no other is changing. */
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: SpoolUsageOptions) {}

  start(): void {
    this.timer = setInterval(() => this.duringPrints(), this.options.intervalMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.chain;
  }

  /** A print ended: report what it used beyond what was already reported (resolves once it is recorded). */
  finished(jobId: string, machineId: string, used: JobFilament): Promise<void> {
    if (used.spoolId === null || used.usedM === null) return Promise.resolve();
    return this.enqueue(jobId, machineId, used.spoolId, used.usedM * 1000, used.gramsPerMetre);
  }

  /** Reports the use so far of every print under way from a spool. */
  private duringPrints(): void {
    for (const { jobId, machineId, progress } of this.options.printing()) {
      if (progress === null || !Number.isFinite(progress)) continue;
      this.chain = this.chain
        .then(async () => {
          const filament = (await this.options.jobs.get(jobId))?.filament;
          if (!filament || filament.spoolId === null || filament.estimatedM === null) return;
          const soFar = filament.estimatedM * 1000 * Math.min(1, Math.max(0, progress / 100));
          await this.record(jobId, machineId, filament.spoolId, soFar, filament.gramsPerMetre);
        })
        .catch((error: unknown) => this.failed(error, jobId));
    }
  }

  private enqueue(
    jobId: string,
    machineId: string,
    spoolId: number,
    totalMm: number,
    gramsPerMetre: number,
  ): Promise<void> {
    this.chain = this.chain
      .then(() => this.record(jobId, machineId, spoolId, totalMm, gramsPerMetre))
      .catch((error: unknown) => this.failed(error, jobId));
    return this.chain;
  }

  private async record(
    jobId: string,
    machineId: string,
    spoolId: number,
    totalMm: number,
    gramsPerMetre: number,
  ): Promise<void> {
    if (!Number.isFinite(totalMm)) return;
    const reported = await this.options.spools.reportedFor(jobId);
    const useLength = Math.round((totalMm - reported) * 1000) / 1000;
    await this.options.reports.record({ spoolId, machineId, jobId, useLength, gramsPerMetre });
  }

  private failed(error: unknown, jobId: string): void {
    this.options.logger.error({ err: error, job: jobId }, 'could not record a Spoolman use report');
  }
}
