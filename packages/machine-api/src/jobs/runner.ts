/**
 * Runs print jobs: one per machine at a time, through queued → slicing → uploading → printing →
 * completed / failed / cancelled, persisted at every step. `submit` returns once the machine has started
 * the job (or throws what stopped it); the runner then follows the print to its end in the background.
 * Each job gets a work directory under the data dir that is removed whatever the outcome. This module
 * orchestrates (submit, dispatch from the queue, cancel, clear, following again after a restart);
 * launch.ts runs one job to its printer; lifecycle.ts holds the machine slots and the jobs in flight and
 * records every transition; machine-fit.ts says whether a machine fits.
 */

import { randomUUID } from 'node:crypto';
import { mkdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { MissingScope } from '../access/errors.js';
import { type Actor, ANONYMOUS, mayManageJob } from '../access/scopes.js';
import type { LineScan } from '../design/line-scan.js';
import type { DesignWorkers } from '../design/workers.js';
import { Conflict, NotFound, type ServiceError } from '../errors.js';
import { MachineError } from '../machines/machine.js';
import type { MachineObserver, ObservedMachine } from '../machines/observer.js';
import type { MachineRegistry, RegisteredMachine } from '../machines/registry.js';
import type { ServiceMetrics } from '../metrics.js';
import type { BedStore } from './bed-store.js';
import type { JobFilament } from './filament.js';
import { isFinal, type Job, type JobParameters } from './job.js';
import type { KeptDesigns } from './kept-designs.js';
import { type LaunchContext, launchJob } from './launch.js';
import { type CurrentJob, JobLifecycle } from './lifecycle.js';
import { assertClearable, assertFilament, assertIdle } from './machine-fit.js';
import { recoverJobs } from './recovery.js';
import { safeExtension } from './signals-and-names.js';
import type { JobFilter, JobStore } from './store.js';

export type { CurrentJob } from './lifecycle.js';

/** A design file the HTTP layer has streamed to disk; the runner takes it over. */
export interface Upload {
  path: string;
  /** The client's file name (no directories). */
  fileName: string;
  size: number;
  /** The line check made while the file streamed in (line-scan.ts); spares the design check a pass. */
  lines?: LineScan;
}

export interface JobRunnerOptions {
  store: JobStore;
  /** Which machines' beds wait for a confirmation that they are clear. */
  beds: BedStore;
  /** Queued jobs' designs, read from the database by whichever instance dispatches them. */
  keptDesigns: KeptDesigns;
  machines: MachineRegistry;
  observer: MachineObserver;
  metrics: ServiceMetrics;
  dataDir: string;
  statusTimeoutMs: number;
  /** Where designs are measured, off the event loop. */
  designs: DesignWorkers;
  logger: Logger;
  /** The Spoolman spool a job on the machine prints from (`slot`: the filament index it uses), if any. */
  spoolFor?: (entry: RegisteredMachine, slot: number | null) => JobSpool | undefined;
  /** Told of every print's filament use at its end (Spoolman use reports). */
  onUse?: (jobId: string, machineId: string, used: JobFilament) => Promise<void>;
}

/** What a job needs to know of the spool it prints from. */
export interface JobSpool {
  id: number;
  material: string | null;
  density: number | null;
  diameter: number | null;
  pricePerKg: number | null;
}

export class JobRunner {
  /** Where the HTTP layer streams uploads before handing them over. */
  readonly uploadDir: string;
  /** The line limit of text designs, which the HTTP layer checks as an upload streams in. */
  readonly maxLineBytes: number;
  private readonly workRoot: string;
  /** The machine slots and the jobs in flight. */
  private readonly lifecycle: JobLifecycle;
  private unobserve: (() => void) | null = null;
  /** Jobs the previous run left printing on printers that print on by themselves (see followAgain). */
  private printingOn: Job[] = [];

  constructor(private readonly options: JobRunnerOptions) {
    this.uploadDir = join(options.dataDir, 'uploads');
    this.maxLineBytes = options.designs.limits.maxLineBytes;
    this.workRoot = join(options.dataDir, 'jobs');
    this.lifecycle = new JobLifecycle(options);
    this.lifecycle.onUse = options.onUse ?? null;
  }

  /**
   * Recovers from the previous run (recovery.ts: claimed queue jobs go back to the queue, jobs that were
   * in flight fail, beds awaiting a clear are restored, leftover files and slicers go). Returns the failed
   * jobs that had reached their machine: their machines hold what they printed.
   */
  async start(): Promise<Job[]> {
    const { interrupted, printingOn } = await recoverJobs(this.options, [this.workRoot, this.uploadDir]);
    // Their machines are held until `followAgain` knows whether they still print them.
    for (const job of printingOn) this.lifecycle.reserve(job.machineId as string, `job ${job.id}`);
    this.printingOn = printingOn;
    this.unobserve = this.options.observer.onChange((change) => {
      this.lifecycle.watchSilence(change);
      this.lifecycle.watchProgress(change);
    });
    return interrupted;
  }

  /**
   * Follows again the jobs a killed run left printing on printers that print on by themselves (call once
   * the machines have started): each is followed to its end as if this run had started it; one whose
   * printer no longer knows it fails with a message, as a USB print does at start. The machines answer
   * side by side: one that waits for its printer's first report (Bambu) holds up no other.
   */
  async followAgain(): Promise<void> {
    await Promise.all(this.printingOn.splice(0).map((job) => this.followJobAgain(job)));
  }

  private async followJobAgain(job: Job): Promise<void> {
    const { store, machines, logger } = this.options;
    const machineId = job.machineId as string;
    const entry = machines.get(machineId);
    const active = await entry?.machine
      .followAgain?.({ jobId: job.id, jobName: job.parameters.job_name })
      .catch(() => null);
    if (active) {
      const flight = this.lifecycle.track(job.id, machineId);
      flight.handedOver = true;
      flight.status = 'printing';
      logger.info({ job: job.id, machine: machineId }, 'following a print of the previous run again');
      // Told as printing again: listeners that act at a print's end (photos, notifications) follow it too.
      this.changed(job);
      void this.lifecycle.follow(flight, active.finished, undefined);
      return;
    }
    const message = `machine-api stopped while the job was printing, and "${machineId}" no longer reports it; what the machine did afterwards is unknown`;
    this.changed(await store.setStatus(job.id, 'failed', message));
    await this.options.beds.markBedAwaiting(machineId, new Date().toISOString(), job.id);
    this.options.observer.setAwaitingClear(machineId, new Date().toISOString());
    await this.lifecycle.freeMachine(machineId, undefined);
  }

  /** Calls `listener` with every job the runner created or changed; returns the unsubscribe function. */
  onJobChange(listener: (job: Job) => void): () => void {
    return this.lifecycle.onJobChange(listener);
  }

  /** Tells the listeners about a job the runner or the queue changed. */
  changed(job: Job): Job {
    return this.lifecycle.changed(job);
  }

  /** Whether a job of this service is on its way to or printing on the machine. */
  isBusy(machineId: string): boolean {
    return this.lifecycle.busyWith(machineId) !== undefined;
  }

  /** Percent printed of a job: the machine's progress while printing, 100 once completed, else null. */
  progressOf(job: Job): number | null {
    if (job.status === 'completed') return 100;
    if (job.status !== 'printing' || !job.machineId) return null;
    return this.options.observer.current(job.machineId)?.status.progress ?? null;
  }

  /** Waits (at most `timeoutMs`) for jobs that are finishing to record their outcome. */
  async drain(timeoutMs: number): Promise<void> {
    this.unobserve?.();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([...this.lifecycle.inFlight()].map((flight) => flight.settled)),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
  }

  /** The job holding `machineId` (slicing, uploading or printing), null when it is free. */
  currentJob(machineId: string): CurrentJob | null {
    return this.lifecycle.currentJob(machineId);
  }

  /**
   * Stops every job that has not reached its machine yet (slicers are killed); their submitters are
   * answered `error`. Printing jobs are left to their machines.
   */
  cancelPreparations(reason: string, error: ServiceError): void {
    for (const flight of this.lifecycle.inFlight()) {
      if (flight.handedOver) continue;
      flight.cancelReason ??= reason;
      flight.cancelError ??= error;
      flight.controller.abort();
    }
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
   * an unknown machine, `MachineBusy` when it has a job or is printing, `MachineNotReady` when its bed
   * awaits a confirmation. Anything answered 4xx leaves no job behind (the client never learns its id);
   * `clientGone` aborting before the machine has the job cancels it, as the anchor does on a disconnect.
   */
  async submit(
    upload: Upload,
    parameters: JobParameters & { machine_id: string },
    owner: string | null = null,
    clientGone?: AbortSignal,
  ): Promise<Job> {
    const { store, machines } = this.options;
    const entry = machines.require(parameters.machine_id);
    const machineId = entry.id;
    this.lifecycle.reserve(machineId, 'another print request');
    let workDir: string | undefined;
    let launched = false;
    try {
      await this.assertReady(entry);
      assertFilament(entry, this.options.observer.current(machineId)?.status, parameters);
      clientGone?.throwIfAborted();
      const jobId = randomUUID();
      workDir = join(this.workRoot, jobId);
      await mkdir(workDir);
      const designPath = join(workDir, `design${safeExtension(upload.fileName)}`);
      await rename(upload.path, designPath);
      const job = this.changed(
        await store.insert({
          id: jobId,
          machineId,
          jobName: parameters.job_name,
          fileName: upload.fileName,
          fileSize: upload.size,
          parameters,
          owner,
        }),
      );
      this.lifecycle.relabel(machineId, `job ${jobId}`);
      launched = true;
      return await launchJob(this.launchContext(), job, entry, designPath, workDir, {
        clientGone,
        forgetRefused: true,
        ...(upload.lines ? { lines: upload.lines } : {}),
      });
    } catch (error) {
      // Once launched, the launch itself has released the machine (someone else may hold it by now).
      if (!launched) await this.lifecycle.freeMachine(machineId, workDir);
      throw error;
    }
  }

  /**
   * Runs a queued job the queue has claimed for `entry`: checks the machine is still ready, then slices
   * the kept design with this machine's profile and starts it. Resolves `not-ready` (the job stays the
   * queue's) when the machine turned out not to be ready; otherwise the job is this runner's from then on
   * and the promise settles once it printing or failed.
   */
  async dispatch(job: Job, entry: RegisteredMachine): Promise<'started' | 'not-ready' | 'failed'> {
    const machineId = entry.id;
    if (this.isBusy(machineId) || !job.designKept) return 'not-ready';
    this.lifecycle.reserve(machineId, `job ${job.id}`);
    try {
      await this.assertReady(entry);
    } catch {
      await this.lifecycle.freeMachine(machineId, undefined);
      return 'not-ready';
    }
    const workDir = join(this.workRoot, job.id);
    let launched = false;
    try {
      await mkdir(workDir, { recursive: true });
      const designPath = join(workDir, `design${safeExtension(job.fileName)}`);
      // A copy, streamed from the database: the kept design stays for a requeue if this attempt fails.
      await this.options.keptDesigns.copyTo(job.id, designPath);
      launched = true;
      await launchJob(this.launchContext(), job, entry, designPath, workDir, { forgetRefused: false });
      return 'started';
    } catch (error) {
      if (!launched) {
        await this.lifecycle.freeMachine(machineId, workDir);
        const message = this.lifecycle.describeFailure(error, job.id);
        this.changed(await this.options.store.setStatus(job.id, 'failed', message));
      }
      return 'failed';
    }
  }

  /**
   * Confirms that the machine's bed is clear (on Klipper also resets the finished file). Refused while a
   * job of this service is on the machine or it prints (`MachineBusy`), when it failed (`MachineRejected`:
   * that needs a look at the machine) and when it is offline.
   */
  async clear(machineId: string): Promise<ObservedMachine> {
    const { machines, observer } = this.options;
    const entry = machines.require(machineId);
    const busyWith = this.lifecycle.busyWith(entry.id);
    if (busyWith)
      throw new MachineError(
        'MachineBusy',
        `machine "${entry.id}" is busy with ${busyWith}; clear it once that has ended`,
      );
    const { status } = await observer.refresh(entry.id);
    const state = status.state;
    assertClearable(entry.id, state);
    if (state.state === 'complete') await entry.machine.clear?.();
    await this.options.beds.markBedClear(entry.id);
    observer.setAwaitingClear(entry.id, null);
    this.options.logger.info({ machine: entry.id }, 'bed confirmed clear');
    return observer.refresh(entry.id);
  }

  /**
   * Cancels a job that has not finished: aborts its preparation, or stops the machine printing it.
   * `actor` must own the job or hold `control` (a `print` key cancels only its own jobs).
   */
  async cancel(id: string, actor: Actor = ANONYMOUS): Promise<Job> {
    const job = await this.get(id);
    if (!mayManageJob(actor, job.owner)) {
      throw new MissingScope(
        `job ${id} was submitted by ${job.owner === null ? 'no key' : `the key "${job.owner}"`}; cancelling another key's job needs the "control" scope`,
      );
    }
    const flight = this.lifecycle.flight(id);
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

  private launchContext(): LaunchContext {
    return { options: this.options, lifecycle: this.lifecycle };
  }

  /** Only an idle machine whose bed is confirmed clear takes a job; the status is read now, not cached. */
  private async assertReady(entry: RegisteredMachine): Promise<void> {
    const { status, awaitingClearSince } = await this.options.observer.refresh(entry.id);
    assertIdle(entry.id, status.state);
    if (awaitingClearSince !== null) {
      throw new MachineError(
        'MachineNotReady',
        `machine "${entry.id}" has had a print on its bed since ${awaitingClearSince}: remove it, then confirm with POST /machines/${entry.id}/clear`,
      );
    }
  }
}
