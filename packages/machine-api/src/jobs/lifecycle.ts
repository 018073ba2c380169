/**
 * The lifecycle of the jobs in flight: which machine each one holds (one job slot per machine), where it
 * is (queued → slicing → uploading → printing → completed / failed / cancelled, recorded at every step
 * and told to the listeners), how it ends (the bed marked as awaiting a clear before the machine is
 * freed, the job's files removed), and who waits for that end. The runner (runner.ts) decides when a job
 * moves; this module is the one place that moves it.
 */

import { rm } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { ClearingMode } from '../config/machine-keys.js';
import { ServiceError } from '../errors.js';
import { MachineError, type PrintOutcome } from '../machines/machine.js';
import type { MachineChange, MachineObserver } from '../machines/observer.js';
import type { MachineRegistry } from '../machines/registry.js';
import type { ServiceMetrics } from '../metrics.js';
import type { BedStore } from './bed-store.js';
import { type JobFilament, usedFilament } from './filament.js';
import type { Job, JobStatus } from './job.js';
import type { KeptDesigns } from './kept-designs.js';
import type { JobStore } from './store.js';

/**
 * The job is no longer claimed for this machine: the queue took it back (another instance found this
 * one dead while it prepared the job). The job is someone else's now; nothing is recorded on it.
 */
export class ClaimLost extends Error {}

/** A job between its machine slot being taken and its final status being recorded. */
export interface Flight {
  jobId: string;
  machineId: string;
  /** The machine has started the job: whatever happens next, something may be on its bed. */
  handedOver: boolean;
  /** Where the job is; `current_job` of its machine reports it. */
  status: JobStatus;
  controller: AbortController;
  /** The highest progress (percent) its machine reported while printing it. */
  progress: number | null;
  /** Set when someone asked for the job to stop; becomes the job's message. */
  cancelReason: string | null;
  /** What the submitter is answered when the job is stopped before printing (409 unless shutting down). */
  cancelError: ServiceError | null;
  /** Resolves once the job has reached a final status and its resources are released. */
  settled: Promise<void>;
  markSettled(): void;
}

/** The job holding a machine, as `current_job` reports it. */
export interface CurrentJob {
  id: string;
  status: JobStatus;
}

export interface JobLifecycleOptions {
  store: JobStore;
  /** Which machines' beds wait for a confirmation that they are clear. */
  beds: BedStore;
  /** Queued jobs' designs (dropped once such a job completed). */
  keptDesigns: KeptDesigns;
  machines: MachineRegistry;
  observer: MachineObserver;
  metrics: ServiceMetrics;
  logger: Logger;
}

export class JobLifecycle {
  /** Machine id → what it is busy with; set synchronously so concurrent submits get exactly one slot. */
  private readonly busy = new Map<string, string>();
  private readonly flights = new Map<string, Flight>();
  private readonly jobListeners = new Set<(job: Job) => void>();
  /** Machine id → the job whose message says the machine went silent. */
  private readonly silent = new Map<string, string>();

  constructor(private readonly options: JobLifecycleOptions) {}

  /** Calls `listener` with every job created or changed; returns the unsubscribe function. */
  onJobChange(listener: (job: Job) => void): () => void {
    this.jobListeners.add(listener);
    return () => this.jobListeners.delete(listener);
  }

  /** Tells the listeners about a job the runner or the queue changed. */
  changed(job: Job): Job {
    for (const listener of this.jobListeners) {
      try {
        listener(job);
      } catch (error) {
        this.options.logger.error({ err: error, job: job.id }, 'job listener failed');
      }
    }
    return job;
  }

  /** What the machine is busy with (`job <id>`, `another print request`), undefined when it is free. */
  busyWith(machineId: string): string | undefined {
    return this.busy.get(machineId);
  }

  /** Takes the machine's one job slot synchronously (concurrent requests get exactly one). */
  reserve(machineId: string, what: string): void {
    const busyWith = this.busy.get(machineId);
    if (busyWith) throw new MachineError('MachineBusy', `machine "${machineId}" is busy with ${busyWith}`);
    this.busy.set(machineId, what);
    this.options.observer.setBusy(machineId, true);
  }

  /** Says what holds an already reserved slot (the job, once it has an id). */
  relabel(machineId: string, what: string): void {
    this.busy.set(machineId, what);
  }

  /** The job holding `machineId` (slicing, uploading or printing), null when it is free. */
  currentJob(machineId: string): CurrentJob | null {
    for (const flight of this.flights.values()) {
      if (flight.machineId === machineId) return { id: flight.jobId, status: flight.status };
    }
    return null;
  }

  /** The flight of a job that has not reached a final status, if any. */
  flight(jobId: string): Flight | undefined {
    return this.flights.get(jobId);
  }

  /** Every job in flight. */
  inFlight(): Iterable<Flight> {
    return this.flights.values();
  }

  /** Starts following a job whose machine slot is reserved; it stays in flight until `settle`. */
  track(jobId: string, machineId: string): Flight {
    let markSettled!: () => void;
    const settled = new Promise<void>((resolve) => {
      markSettled = resolve;
    });
    const flight: Flight = {
      jobId,
      machineId,
      handedOver: false,
      status: 'queued',
      progress: null,
      controller: new AbortController(),
      cancelReason: null,
      cancelError: null,
      settled,
      markSettled,
    };
    this.flights.set(jobId, flight);
    return flight;
  }

  /**
   * Records the job's next status, in the store and for `current_job`, and tells the listeners. The steps
   * before the printer has the job (`slicing`, `uploading`) are fenced: they happen only while the job is
   * still claimed for this machine, else `ClaimLost` (see JobStore.advanceClaimed).
   */
  async advance(flight: Flight, status: JobStatus): Promise<Job> {
    const { store } = this.options;
    const job =
      status === 'slicing' || status === 'uploading'
        ? await store.advanceClaimed(flight.jobId, flight.machineId, status)
        : await store.setStatus(flight.jobId, status);
    if (!job) {
      throw new ClaimLost(
        `job ${flight.jobId} went back to the queue while "${flight.machineId}" prepared it`,
      );
    }
    flight.status = status;
    return this.changed(job);
  }

  /**
   * Releases the machine, then records the end of a print it had started: a client that sees the job
   * final may print again at once, so the machine must already be free by then.
   */
  async follow(flight: Flight, finished: Promise<PrintOutcome>, workDir: string | undefined): Promise<void> {
    const outcome = await finished.catch(
      (error: unknown): PrintOutcome => ({
        status: 'failed',
        message: this.describeFailure(error, flight.jobId),
      }),
    );
    const message =
      outcome.status === 'failed'
        ? outcome.message
        : outcome.status === 'cancelled'
          ? (flight.cancelReason ?? 'the print was stopped on the machine')
          : null;
    const entry = this.options.machines.get(flight.machineId);
    const bedAwaits = !(entry && clearsItself(entry.common.clearing.mode, outcome.status));
    if (entry && !bedAwaits) {
      // The bed is clear (the printer's own doing, or the eject G-code that ended the job); Klipper still
      // has to forget the finished file to read idle.
      await entry.machine.clear?.().catch((error: unknown) => {
        this.options.logger.warn({ err: error, machine: flight.machineId }, 'automatic clear failed');
      });
    }
    await this.releaseMachine(flight, workDir, bedAwaits);
    try {
      await this.recordUse(flight, outcome);
      await this.finish(flight, outcome.status, message);
    } catch (error) {
      this.options.logger.error({ err: error, job: flight.jobId }, 'could not record the end of a job');
    } finally {
      this.settle(flight);
    }
  }

  /**
   * The filament a print used: the printer's own count where it reports one, else the estimate scaled
   * by the progress reached (all of it for a completed print), and what that cost.
   */
  private async recordUse(flight: Flight, outcome: PrintOutcome): Promise<void> {
    const filament = (await this.options.store.get(flight.jobId))?.filament;
    if (!filament) return;
    const reported = outcome.filamentUsedMm;
    const used = usedFilament(filament, {
      completed: outcome.status === 'completed',
      reportedMm: reported !== undefined && Number.isFinite(reported) && reported >= 0 ? reported : null,
      progress: flight.progress,
    });
    await this.options.store.setFilament(flight.jobId, used);
    // Recorded before the job turns final: a job seen ended has its use report in the outbox.
    await this.onUse?.(flight.jobId, flight.machineId, used);
  }

  /** Told of every print's filament use at its end (Spoolman reports). */
  onUse: ((jobId: string, machineId: string, used: JobFilament) => Promise<void>) | null = null;

  /** Keeps the highest progress the machine of each printing job reported. */
  watchProgress(change: MachineChange): void {
    const progress = change.machine.status.progress;
    if (progress === null || !Number.isFinite(progress)) return;
    for (const flight of this.flights.values()) {
      if (flight.machineId !== change.machine.id || flight.status !== 'printing') continue;
      flight.progress = Math.max(flight.progress ?? 0, progress);
    }
  }

  /** Records a final status (the machine is already released), counts it and logs it. */
  async finish(flight: Flight, status: JobStatus, message: string | null): Promise<void> {
    // A completed queue job's kept design is no longer needed (a failed one stays for a requeue). It goes
    // before the status is recorded: whoever sees the job completed must no longer find its file.
    if (status === 'completed') await this.dropKeptDesign(flight.jobId);
    const job = await this.options.store.setStatus(flight.jobId, status, message);
    this.changed(job);
    this.options.metrics.jobFinished(status as 'completed' | 'failed' | 'cancelled');
    this.options.logger.info(
      { job: flight.jobId, machine: flight.machineId, status, message },
      'job finished',
    );
  }

  private async dropKeptDesign(jobId: string): Promise<void> {
    if (!(await this.options.store.get(jobId))?.designKept) return;
    await this.options.store.dropDesign(jobId);
    await this.options.keptDesigns.drop(jobId);
  }

  /**
   * Records that the print's remains await a clear (when they do), before the machine is freed: the queue
   * must never see the machine free with an unconfirmed bed.
   */
  async releaseMachine(flight: Flight, workDir: string | undefined, bedAwaits: boolean): Promise<void> {
    if (bedAwaits) {
      const since = new Date().toISOString();
      try {
        await this.options.beds.markBedAwaiting(flight.machineId, since, flight.jobId);
      } catch (error) {
        this.options.logger.error({ err: error, machine: flight.machineId }, 'could not record the bed');
      }
      this.options.observer.setAwaitingClear(flight.machineId, since);
    }
    this.silent.delete(flight.machineId);
    await this.freeMachine(flight.machineId, workDir);
  }

  /** Removes the job's files and lets the machine take the next job. */
  async freeMachine(machineId: string, workDir: string | undefined): Promise<void> {
    if (workDir) {
      await rm(workDir, { recursive: true, force: true }).catch((error: unknown) => {
        this.options.logger.warn({ err: error, workDir }, 'could not remove a job directory');
      });
    }
    this.busy.delete(machineId);
    this.options.observer.setBusy(machineId, false);
    // The machine's own state may have moved on while it was busy (e.g. Klipper `complete`).
    void this.options.observer.refresh(machineId).catch(() => undefined);
  }

  /** Wakes whoever waits for the job to be final (cancel); its status is recorded by then. */
  settle(flight: Flight): void {
    this.flights.delete(flight.jobId);
    flight.markSettled();
  }

  /** Keeps a message on the printing job while its machine does not answer, and drops it once it does. */
  watchSilence(change: MachineChange): void {
    if (change.kind !== 'state') return;
    const { id, offlineSince } = change.machine;
    const jobId = this.busy.get(id)?.replace(/^job /, '');
    const flight = jobId ? this.flights.get(jobId) : undefined;
    const flagged = this.silent.get(id);
    if (offlineSince !== null && flight && flagged !== flight.jobId) {
      this.silent.set(id, flight.jobId);
      const message = `machine "${id}" has not answered since ${new Date(offlineSince).toISOString()}; the job fails only if it stays silent beyond the machine's grace period, and goes on if the machine is found still printing it`;
      void this.options.store.setMessage(flight.jobId, message).then((job) => job && this.changed(job));
    } else if (offlineSince === null && flagged) {
      this.silent.delete(id);
      void this.options.store.setMessage(flagged, null).then((job) => job && this.changed(job));
    }
  }

  /** The message a failed job keeps: the domain error's own words, never internals. */
  describeFailure(error: unknown, jobId: string): string {
    if (error instanceof ServiceError) return error.message;
    this.options.logger.error({ err: error, job: jobId }, 'job failed with an unexpected error');
    return 'internal error (see the service log)';
  }
}

/**
 * Whether a print that ended with `status` leaves the bed clear without a confirmation: `auto` printers
 * clear after a completed or cancelled print; with `gcode` only a completed job ran its eject G-code.
 */
export function clearsItself(mode: ClearingMode, status: PrintOutcome['status']): boolean {
  if (mode === 'auto') return status !== 'failed';
  if (mode === 'gcode') return status === 'completed';
  return false;
}
