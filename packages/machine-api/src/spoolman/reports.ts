/**
 * The outbox of Spoolman use reports: every report is written to the jobs database first, then sent in
 * order (oldest first, one at a time) by a background loop with backoff, so a report survives a Spoolman
 * outage, a restart and a `kill -9`, and no request of the API ever waits for Spoolman.
 *
 * Exactly once. Spoolman's `PUT /spool/{id}/use` adds to the spool's `used_length`; it is not idempotent
 * and has no request id. So before sending, the spool's `used_length` is read and written to the report
 * with the state `sending`; only then does the request go out, and the report becomes `sent` when Spoolman
 * answers. A report found `sending` (the process died, or the answer never came: a timeout, a dropped
 * connection) is re-checked first: if the spool's `used_length` has reached `before_length + use_length`,
 * Spoolman applied it and the report is marked sent without sending it again; otherwise it was not applied
 * and is sent again (with the new `before_length`). The rule assumes nobody else reports use of that spool
 * between the two reads — the spool is assigned to the machine whose prints this service reports.
 *
 * A 404 for the spool drops the report and unassigns the spool (with a notice on the machine); any other
 * refusal drops the report with the reason logged (resending cannot change a 4xx). Farm instances share
 * the table: each sends the reports of the machines it drives.
 */

import type { Logger } from 'pino';
import type { SpoolAssignments } from './assignments.js';
import { type SpoolmanClient, SpoolmanRefused, SpoolNotFound } from './client.js';
import type { Report, SpoolStore } from './store.js';

/** Reports shorter than this (mm) are not worth a request; Spoolman's float sums are compared within it. */
export const MIN_REPORT_MM = 0.01;
const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 10_000;

export interface SpoolReportsOptions {
  store: SpoolStore;
  client: SpoolmanClient;
  assignments: SpoolAssignments;
  /** The machines this instance drives. */
  machineIds: readonly string[];
  logger: Logger;
}

export class SpoolReports {
  /** Grams of the reports not applied yet, by spool (what the queue subtracts from Spoolman's figure). */
  private unsent = new Map<number, number>();
  private kick: (() => void) | null = null;
  private kicked = false;
  private closed = false;
  private loop: Promise<void> | null = null;
  private readonly stop = new AbortController();

  constructor(private readonly options: SpoolReportsOptions) {}

  async start(): Promise<void> {
    await this.refreshUnsent();
    this.loop = this.run();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stop.abort();
    this.kick?.();
    await this.loop;
  }

  /** Grams reported to no avail yet for the spool. */
  unsentGrams(spoolId: number): number {
    return this.unsent.get(spoolId) ?? 0;
  }

  /** Records a report (it is durable once this resolves) and wakes the sender. */
  async record(report: {
    spoolId: number;
    machineId: string;
    jobId: string;
    useLength: number;
    gramsPerMetre: number;
  }): Promise<void> {
    if (!(report.useLength >= MIN_REPORT_MM) || !Number.isFinite(report.useLength)) return;
    await this.options.store.addReport(report);
    await this.refreshUnsent();
    this.wake();
  }

  private wake(): void {
    this.kicked = true;
    this.kick?.();
  }

  private async run(): Promise<void> {
    const { store, machineIds, logger } = this.options;
    let delay = FIRST_RETRY_MS;
    while (!this.closed) {
      this.kicked = false;
      let report: Report | undefined;
      try {
        report = await store.nextUnsent(machineIds);
        if (report) {
          await this.deliver(report);
          delay = FIRST_RETRY_MS;
          await this.refreshUnsent();
          continue;
        }
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        logger.warn(
          { spool: report?.spoolId, report: report?.seq, err: message },
          'Spoolman report not sent yet',
        );
        if (report) await store.noteError(report.seq, message).catch(() => undefined);
        await this.pause(delay);
        delay = Math.min(delay * 2, MAX_RETRY_MS);
        continue;
      }
      await this.pause(null);
    }
  }

  /** Waits `ms` (or until woken when `ms` is null); a wake-up during a backoff does not shorten it. */
  private pause(ms: number | null): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (ms === null && this.kicked) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.kick = null;
        resolve();
      };
      const timer = ms === null ? undefined : setTimeout(done, ms);
      this.kick = ms === null ? done : () => this.closed && done();
    });
  }

  /** Sends one report, exactly once (see the module comment). Throws when Spoolman cannot be reached. */
  private async deliver(report: Report): Promise<void> {
    const { store, client, assignments, logger } = this.options;
    try {
      const before = await client.spool(report.spoolId);
      if (
        report.state === 'sending' &&
        report.beforeLength !== null &&
        before.usedLengthMm >= report.beforeLength + report.useLength - MIN_REPORT_MM
      ) {
        await store.markSent(report.seq);
        await assignments.remember(before);
        logger.info({ spool: report.spoolId, report: report.seq }, 'Spoolman had applied the report already');
        return;
      }
      await store.markSending(report.seq, before.usedLengthMm);
      const after = await client.use(report.spoolId, report.useLength);
      await store.markSent(report.seq);
      await assignments.remember(after);
    } catch (error) {
      if (error instanceof SpoolNotFound) {
        await store.markDropped(report.seq, error.message);
        await assignments.forget(
          report.spoolId,
          `${error.message} (a use report for job ${report.jobId} was dropped)`,
        );
        return;
      }
      if (error instanceof SpoolmanRefused) {
        await store.markDropped(report.seq, error.message);
        logger.error(
          { spool: report.spoolId, report: report.seq, err: error.message },
          'Spoolman refused a use report; dropped',
        );
        return;
      }
      throw error;
    }
  }

  private async refreshUnsent(): Promise<void> {
    this.unsent = await this.options.store.unsentGrams();
  }
}
