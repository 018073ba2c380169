/**
 * Runs print jobs: one per machine at a time, through queued → slicing → uploading → printing →
 * completed / failed / cancelled, persisted at every step. `submit` returns once the machine has started
 * the job (or throws what stopped it); the runner then follows the print to its end in the background.
 * Each job gets a work directory under the data dir that is removed whatever the outcome.
 */

import { randomUUID } from 'node:crypto';
import { mkdir, rename, rm } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { Logger } from 'pino';
import { Conflict, MachineBusy, NotFound, ServiceError } from '../errors.js';
import { MachineError, type MachineState, type PrintOutcome } from '../machines/machine.js';
import type { MachineRegistry } from '../machines/registry.js';
import type { ServiceMetrics } from '../metrics.js';
import { preparePrint } from '../slicer/pipeline.js';
import { isFinal, type Job, type JobParameters, type JobStatus } from './job.js';
import type { JobFilter, JobStore } from './store.js';

/** A design file the HTTP layer has streamed to disk; the runner takes it over. */
export interface Upload {
  path: string;
  /** The client's file name (no directories). */
  fileName: string;
  size: number;
}

interface Flight {
  jobId: string;
  machineId: string;
  controller: AbortController;
  /** Set when someone asked for the job to stop; becomes the job's message. */
  cancelReason: string | null;
  /** Resolves once the job has reached a final status and its resources are released. */
  settled: Promise<void>;
  markSettled(): void;
}

export interface JobRunnerOptions {
  store: JobStore;
  machines: MachineRegistry;
  metrics: ServiceMetrics;
  dataDir: string;
  statusTimeoutMs: number;
  logger: Logger;
}

export class JobRunner {
  /** Where the HTTP layer streams uploads before handing them over. */
  readonly uploadDir: string;
  private readonly workRoot: string;
  /** Machine id → what it is busy with; set synchronously so concurrent submits get exactly one slot. */
  private readonly busy = new Map<string, string>();
  private readonly flights = new Map<string, Flight>();

  constructor(private readonly options: JobRunnerOptions) {
    this.uploadDir = join(options.dataDir, 'uploads');
    this.workRoot = join(options.dataDir, 'jobs');
  }

  /** Fails the jobs a previous run left in flight and clears leftover files. */
  async start(): Promise<void> {
    const interrupted = await this.options.store.failUnfinished();
    for (const job of interrupted) {
      this.options.logger.warn({ job: job.id, machine: job.machineId }, 'job interrupted by a restart');
    }
    await Promise.all(
      [this.workRoot, this.uploadDir].map((dir) => rm(dir, { recursive: true, force: true })),
    );
    await Promise.all([this.workRoot, this.uploadDir].map((dir) => mkdir(dir, { recursive: true })));
  }

  /** Waits (at most `timeoutMs`) for jobs that are finishing to record their outcome. */
  async drain(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([...this.flights.values()].map((flight) => flight.settled)),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
  }

  async get(id: string): Promise<Job> {
    const job = await this.options.store.get(id);
    if (!job) throw new NotFound(`no job with id "${id}"`);
    return job;
  }

  list(filter: JobFilter): Promise<Job[]> {
    return this.options.store.list(filter);
  }

  /**
   * Creates a job for `upload` and runs it until the machine has started printing. Throws `NotFound` for
   * an unknown machine and `MachineBusy` when it is not idle or already has a job; those create no job.
   */
  async submit(upload: Upload, parameters: JobParameters): Promise<Job> {
    const { store, machines, statusTimeoutMs } = this.options;
    const entry = machines.require(parameters.machine_id);
    const machineId = entry.id;
    const busyWith = this.busy.get(machineId);
    if (busyWith) throw new MachineBusy(`machine "${machineId}" is busy with ${busyWith}`);
    this.busy.set(machineId, 'another print request');

    let flight: Flight | undefined;
    let workDir: string | undefined;
    try {
      const [status] = await machines.statuses([entry], statusTimeoutMs);
      assertIdle(machineId, status?.state ?? { state: 'unknown' });

      const jobId = randomUUID();
      workDir = join(this.workRoot, jobId);
      await mkdir(workDir);
      const designPath = join(workDir, `design${safeExtension(upload.fileName)}`);
      await rename(upload.path, designPath);
      let job = await store.insert({
        id: jobId,
        machineId,
        jobName: parameters.job_name,
        fileName: upload.fileName,
        fileSize: upload.size,
        parameters,
      });
      flight = this.track(jobId, machineId);
      this.busy.set(machineId, `job ${jobId}`);

      job = await store.setStatus(jobId, 'slicing');
      const signal = flight.controller.signal;
      const prepared = await preparePrint({
        uploadPath: designPath,
        fileName: upload.fileName,
        format: entry.machine.printFormat,
        maxPartVolume: machines.maxPartVolume(entry),
        slicer: entry.common.slicer,
        filamentIndex:
          parameters.slicer_configuration?.filament_idx ?? entry.common.loadedFilamentIdx ?? undefined,
        workDir,
        signal,
      });
      signal.throwIfAborted();
      if (prepared.estimate) await store.setEstimate(jobId, prepared.estimate);
      job = await store.setStatus(jobId, 'uploading');
      const active = await entry.machine.print({
        jobId,
        jobName: parameters.job_name,
        filePath: prepared.filePath,
        signal,
      });
      // Cancelled while the machine was starting: it has the job now, so stop it there.
      if (signal.aborted) await entry.machine.stop().catch(() => undefined);
      job = await store.setStatus(jobId, 'printing');
      void this.follow(flight, active.finished, workDir);
      return job;
    } catch (error) {
      await this.freeMachine(machineId, workDir);
      if (!flight) throw error;
      const cancelled = flight.controller.signal.aborted;
      const status: JobStatus = cancelled ? 'cancelled' : 'failed';
      const message = cancelled
        ? (flight.cancelReason ?? 'cancelled')
        : this.describeFailure(error, flight.jobId);
      try {
        await this.finish(flight, status, message);
      } finally {
        this.settle(flight);
      }
      throw cancelled ? new Conflict(`job ${flight.jobId} was cancelled before it started printing`) : error;
    }
  }

  /** Cancels a job that has not finished: aborts its preparation, or stops the machine printing it. */
  async cancel(id: string): Promise<Job> {
    const job = await this.get(id);
    const flight = this.flights.get(id);
    if (!flight || isFinal(job.status)) throw new Conflict(`job ${id} is already ${job.status}`);
    flight.cancelReason ??= 'cancelled by request';
    if (job.status === 'printing') {
      await this.options.machines.require(flight.machineId).machine.stop();
    } else {
      flight.controller.abort();
    }
    await flight.settled;
    return this.get(id);
  }

  private track(jobId: string, machineId: string): Flight {
    let markSettled!: () => void;
    const settled = new Promise<void>((resolve) => {
      markSettled = resolve;
    });
    const flight: Flight = {
      jobId,
      machineId,
      controller: new AbortController(),
      cancelReason: null,
      settled,
      markSettled,
    };
    this.flights.set(jobId, flight);
    return flight;
  }

  /**
   * Releases the machine, then records the end of a print it had started: a client that sees the job
   * final may print again at once, so the machine must already be free by then.
   */
  private async follow(flight: Flight, finished: Promise<PrintOutcome>, workDir: string): Promise<void> {
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
    await this.freeMachine(flight.machineId, workDir);
    try {
      await this.finish(flight, outcome.status, message);
    } catch (error) {
      this.options.logger.error({ err: error, job: flight.jobId }, 'could not record the end of a job');
    } finally {
      this.settle(flight);
    }
  }

  private async finish(flight: Flight, status: JobStatus, message: string | null): Promise<void> {
    await this.options.store.setStatus(flight.jobId, status, message);
    this.options.metrics.jobFinished(status as 'completed' | 'failed' | 'cancelled');
    this.options.logger.info(
      { job: flight.jobId, machine: flight.machineId, status, message },
      'job finished',
    );
  }

  /** Removes the job's files and lets the machine take the next job. */
  private async freeMachine(machineId: string, workDir: string | undefined): Promise<void> {
    if (workDir) {
      await rm(workDir, { recursive: true, force: true }).catch((error: unknown) => {
        this.options.logger.warn({ err: error, workDir }, 'could not remove a job directory');
      });
    }
    this.busy.delete(machineId);
  }

  /** Wakes whoever waits for the job to be final (cancel); its status is recorded by then. */
  private settle(flight: Flight): void {
    this.flights.delete(flight.jobId);
    flight.markSettled();
  }

  /** The message a failed job keeps: the domain error's own words, never internals. */
  private describeFailure(error: unknown, jobId: string): string {
    if (error instanceof ServiceError || error instanceof MachineError) return error.message;
    this.options.logger.error({ err: error, job: jobId }, 'job failed with an unexpected error');
    return 'internal error (see the service log)';
  }
}

/** Only an idle machine takes a job, as in the anchor; an offline one is reported as such. */
function assertIdle(machineId: string, state: MachineState): void {
  if (state.state === 'idle') return;
  if (state.state === 'offline')
    throw new MachineError('MachineOffline', `machine "${machineId}" is offline`);
  // A failed machine is not busy: say what is wrong with it, so the person knows what to clear.
  if (state.state === 'failed')
    throw new MachineError(
      'MachineRejected',
      `machine "${machineId}" reports a failure${state.message ? `: ${state.message}` : ''}; clear it before printing`,
    );
  throw new MachineBusy(`machine "${machineId}" is ${state.state}, not idle`);
}

/** The upload's extension, lower-cased and reduced to safe characters (the content decides the type). */
function safeExtension(fileName: string): string {
  const extension = extname(fileName).toLowerCase();
  return /^\.[a-z0-9]{1,8}$/.test(extension) ? extension : '';
}
