/** The farm queue (see queue.ts for what it promises): submission, order, dispatch on `ready`. */

import { randomUUID } from 'node:crypto';
import { mkdir, rename, rm } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { Logger } from 'pino';
import { MissingScope } from '../access/errors.js';
import { type Actor, ANONYMOUS, mayManageJob } from '../access/scopes.js';
import type { DesignWorkers } from '../design/workers.js';
import { BadRequest, Conflict, NotFound } from '../errors.js';
import { estimateFilament } from '../jobs/filament.js';
import { isFinal, isWaiting, type Job, type QueueConstraints } from '../jobs/job.js';
import type { JobRunner, Upload } from '../jobs/runner.js';
import type { JobStore } from '../jobs/store.js';
import type { MachineObserver } from '../machines/observer.js';
import type { MachineRegistry, RegisteredMachine } from '../machines/registry.js';
import type { ServiceMetrics } from '../metrics.js';
import { uploadFilament } from '../slicer/pipeline.js';
import type { FarmQueue, QueueChange, QueuedJobView, QueueSubmission } from './queue.js';
import { candidates, type DesignNeeds, explainNoCandidate, factsOf, type MachineFacts } from './routing.js';

export interface QueueServiceOptions {
  store: JobStore;
  runner: JobRunner;
  /** Where designs are measured: off the event loop, within the configured `[server]` limits. */
  designs: DesignWorkers;
  machines: MachineRegistry;
  observer: MachineObserver;
  metrics: ServiceMetrics;
  dataDir: string;
  logger: Logger;
}

export class QueueService implements FarmQueue {
  /** Where waiting jobs' designs are kept (survives restarts, unlike the runner's work dirs). */
  private readonly designDir: string;
  private readonly listeners = new Set<(change: QueueChange) => void>();
  /** Job id → place in the queue, refreshed after every change. */
  private positions = new Map<string, number>();
  private dispatching: Promise<void> | null = null;
  private dispatchAgain = false;
  private closed = false;
  private unsubscribe: (() => void)[] = [];
  /** The last list() answer and the stamp and facts it was built from (see list()). */
  private keptList: { key: string; views: readonly QueuedJobView[] } | null = null;

  constructor(private readonly options: QueueServiceOptions) {
    this.designDir = join(options.dataDir, 'queue');
  }

  /** Loads the waiting jobs and starts dispatching whenever a machine becomes ready. */
  async start(): Promise<void> {
    await mkdir(this.designDir, { recursive: true });
    await this.refreshOrder();
    this.unsubscribe.push(
      this.options.observer.onChange((change) => {
        if (change.kind === 'state' && change.machine.ready) this.schedule();
      }),
    );
    this.schedule();
  }

  /** Stops dispatching and waits for a dispatch round under way. */
  async close(): Promise<void> {
    this.closed = true;
    for (const unsubscribe of this.unsubscribe) unsubscribe();
    await this.dispatching;
  }

  onChange(listener: (change: QueueChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async submit(upload: Upload, submission: QueueSubmission, owner: string | null = null): Promise<Job> {
    const { store, runner } = this.options;
    const info = await this.options.designs.inspect(upload.path, upload.fileName, undefined, upload.lines);
    const design: DesignNeeds = { kind: info.kind, size: info.size };
    const constraints = normalised(submission.constraints);
    if (candidates(this.facts(), constraints, design).length === 0) {
      throw new BadRequest(explainNoCandidate(this.facts(), constraints, design));
    }
    // What the upload says about its filament (G-code comments, a 3MF's slice info), so that the queue
    // can hold the job back from a spool too short for it before anything is sliced.
    const figures = await uploadFilament(upload.path, info.kind);
    const filament = estimateFilament(figures, {
      material: constraints.material ?? null,
      density: null,
      diameter: null,
      pricePerKg: null,
    });
    const id = randomUUID();
    const designPath = join(this.designDir, `${id}${safeExtension(upload.fileName)}`);
    // The file first, then the row: a crash in between leaves an orphan file, never a job without design.
    await rename(upload.path, designPath);
    let job: Job;
    try {
      job = await store.insert({
        id,
        machineId: null,
        jobName: submission.jobName,
        fileName: upload.fileName,
        fileSize: upload.size,
        parameters: {
          job_name: submission.jobName,
          ...(submission.slicerConfiguration !== undefined
            ? { slicer_configuration: submission.slicerConfiguration }
            : {}),
          design,
        },
        queue: { priority: submission.priority, constraints, designPath },
        owner,
        filament,
      });
    } catch (error) {
      await rm(designPath, { force: true });
      throw error;
    }
    await this.refreshOrder();
    runner.changed(job);
    this.emit({ reason: 'queued', jobId: id, machineId: null });
    this.schedule();
    return job;
  }

  /**
   * The waiting jobs in order, each with the machines it can go to. The list is a pure function of the
   * waiting rows and the machines' routing facts, so it is kept under both (ARCHITECTURE.md, the cache
   * invariant): the database's change stamp, read first, before the rows, and the facts as they are now.
   * Any committed change or any change of a fact builds it anew; an unchanged pair answers the same
   * (frozen) array, which the route may keep its serialised form for.
   */
  async list(): Promise<readonly QueuedJobView[]> {
    const stamp = this.options.store.changeStampNow();
    const facts = this.facts();
    const key = stamp === undefined ? undefined : `${stamp}\n${JSON.stringify(facts)}`;
    if (key !== undefined && this.keptList?.key === key) return this.keptList.views;
    const waiting = await this.options.store.waiting();
    const views = Object.freeze(
      waiting.map((job, index) => ({
        job,
        position: index + 1,
        machines: candidates(facts, job.constraints ?? {}, job.parameters.design ?? null),
      })),
    );
    if (key !== undefined) this.keptList = { key, views };
    return views;
  }

  positionOf(jobId: string): number | null {
    return this.positions.get(jobId) ?? null;
  }

  async change(
    jobId: string,
    change: { priority?: number; constraints?: QueueConstraints },
    actor: Actor = ANONYMOUS,
  ): Promise<Job> {
    const { store, runner } = this.options;
    const current = await this.require(jobId);
    assertMayManage(actor, current, 'changing');
    if (!isWaiting(current)) {
      throw new Conflict(
        `job ${jobId} is ${current.status}${current.machineId ? ` on "${current.machineId}"` : ''}; only a job waiting in the queue can be changed`,
      );
    }
    const constraints = change.constraints !== undefined ? normalised(change.constraints) : undefined;
    if (constraints) {
      const design = current.parameters.design ?? null;
      if (candidates(this.facts(), constraints, design).length === 0) {
        throw new BadRequest(explainNoCandidate(this.facts(), constraints, design));
      }
    }
    const job = await store.reprioritise(jobId, {
      ...(change.priority !== undefined ? { priority: change.priority } : {}),
      ...(constraints ? { constraints } : {}),
    });
    if (!job) throw new Conflict(`job ${jobId} left the queue meanwhile; it can no longer be changed`);
    await this.refreshOrder();
    runner.changed(job);
    this.emit({ reason: 'changed', jobId, machineId: null });
    this.schedule();
    return job;
  }

  async cancel(jobId: string, actor: Actor = ANONYMOUS): Promise<Job> {
    const { store, runner } = this.options;
    const current = await this.require(jobId);
    assertMayManage(actor, current, 'cancelling');
    if (isWaiting(current)) {
      const job = await store.cancelWaiting(jobId, 'cancelled by request while waiting in the queue');
      if (job) {
        await this.refreshOrder();
        runner.changed(job);
        this.emit({ reason: 'cancelled', jobId, machineId: null });
        return job;
      }
    }
    return runner.cancel(jobId, actor);
  }

  async requeue(jobId: string, actor: Actor = ANONYMOUS): Promise<Job> {
    const { store, runner } = this.options;
    const current = await this.require(jobId);
    assertMayManage(actor, current, 'requeueing');
    if (!isFinal(current.status) || current.status === 'completed') {
      throw new Conflict(`job ${jobId} is ${current.status}; only a failed or cancelled job can be requeued`);
    }
    if (!current.designPath) {
      throw new Conflict(
        `job ${jobId} was not submitted through the queue, so its design was not kept; submit it again`,
      );
    }
    const job = await store.requeue(jobId);
    if (!job) throw new Conflict(`job ${jobId} changed meanwhile; it cannot be requeued now`);
    await this.refreshOrder();
    runner.changed(job);
    this.emit({ reason: 'requeued', jobId, machineId: null });
    this.schedule();
    return job;
  }

  /** Runs a dispatch round now, or once more after the one under way (rounds never overlap). */
  private schedule(): void {
    if (this.closed) return;
    if (this.dispatching) {
      this.dispatchAgain = true;
      return;
    }
    this.dispatching = (async () => {
      try {
        do {
          this.dispatchAgain = false;
          await this.dispatchRound();
        } while (this.dispatchAgain && !this.closed);
      } catch (error) {
        this.options.logger.error({ err: error }, 'queue dispatch failed');
      } finally {
        this.dispatching = null;
      }
    })();
  }

  /** Gives each ready machine the first waiting job (by priority, then age) it can take. */
  private async dispatchRound(): Promise<void> {
    const { store, runner, machines, observer, metrics } = this.options;
    const free = observer.all().filter((machine) => machine.ready && !runner.isBusy(machine.id));
    if (free.length === 0) return;
    const waiting = await store.waiting();
    const facts = new Map(this.facts().map((fact) => [fact.id, fact]));
    const taken = new Set<string>();
    const launches: (() => void)[] = [];
    let dispatched = false;
    for (const job of waiting) {
      if (taken.size === free.length || this.closed) break;
      const target = free.find((machine) => {
        const fact = facts.get(machine.id);
        return (
          !taken.has(machine.id) &&
          fact !== undefined &&
          candidates([fact], job.constraints ?? {}, job.parameters.design ?? null).length === 1
        );
      });
      if (!target) continue;
      const entry = machines.get(target.id);
      const claimed = entry ? await store.claim(job.id, target.id) : undefined;
      if (!entry || !claimed) continue;
      taken.add(target.id);
      dispatched = true;
      metrics.jobDispatched(
        target.id,
        (Date.now() - Date.parse(claimed.queuedAt ?? claimed.createdAt)) / 1000,
      );
      this.positions.delete(job.id);
      this.emit({ reason: 'dispatched', jobId: job.id, machineId: target.id });
      launches.push(() => this.launch(claimed, entry));
    }
    // Claims first, launches after: the slicing and upload work of the first jobs must not delay the
    // claims of the others when many machines become ready at once.
    for (const launch of launches) launch();
    if (dispatched) await this.refreshOrder();
  }

  /** Hands a claimed job to the runner; a machine that turned out not to be ready gives it back. */
  private launch(job: Job, entry: RegisteredMachine): void {
    const { store, runner, logger } = this.options;
    void runner.dispatch(job, entry).then(
      async (result) => {
        if (result !== 'not-ready') return;
        // The machine was taken meanwhile (e.g. by POST /print): the job keeps its place in the queue.
        const returned = await store.unclaim(job.id);
        await this.refreshOrder();
        runner.changed(returned);
        this.emit({ reason: 'returned', jobId: job.id, machineId: null });
        this.schedule();
      },
      (error: unknown) => logger.error({ err: error, job: job.id }, 'dispatch failed'),
    );
  }

  private facts(): MachineFacts[] {
    const { machines, observer } = this.options;
    return machines.machines.map((entry) =>
      factsOf(machines, entry, observer.current(entry.id)?.status.hardware),
    );
  }

  private async refreshOrder(): Promise<void> {
    const waiting = await this.options.store.waiting();
    this.positions = new Map(waiting.map((job, index) => [job.id, index + 1]));
    this.options.metrics.setQueueDepth(waiting.length);
  }

  private emit(change: Omit<QueueChange, 'depth'>): void {
    const full = { ...change, depth: this.positions.size };
    for (const listener of this.listeners) {
      try {
        listener(full);
      } catch (error) {
        this.options.logger.error({ err: error }, 'queue listener failed');
      }
    }
  }

  private async require(jobId: string): Promise<Job> {
    const job = await this.options.store.get(jobId);
    if (!job) throw new NotFound(`no job with id "${jobId}"`);
    return job;
  }
}

/** A `print` key manages only its own jobs; `control` manages anyone's. */
function assertMayManage(actor: Actor, job: Job, what: string): void {
  if (mayManageJob(actor, job.owner)) return;
  throw new MissingScope(
    `job ${job.id} was submitted by ${job.owner === null ? 'no key' : `the key "${job.owner}"`}; ${what} another key's job needs the "control" scope`,
  );
}

/** Drops duplicate machine ids; keeps only the keys that constrain. */
function normalised(constraints: QueueConstraints): QueueConstraints {
  return {
    ...(constraints.machine_ids ? { machine_ids: [...new Set(constraints.machine_ids)] } : {}),
    ...(constraints.material !== undefined ? { material: constraints.material } : {}),
    ...(constraints.nozzle_diameter !== undefined ? { nozzle_diameter: constraints.nozzle_diameter } : {}),
    ...(constraints.machine_type !== undefined ? { machine_type: constraints.machine_type } : {}),
  };
}

function safeExtension(fileName: string): string {
  const extension = extname(fileName).toLowerCase();
  return /^\.[a-z0-9]{1,8}$/.test(extension) ? extension : '';
}
