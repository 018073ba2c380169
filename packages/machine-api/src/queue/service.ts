/** The farm queue (see queue.ts for what it promises): submission, order, dispatch on `ready`. */

import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { type Actor, ANONYMOUS } from '../access/scopes.js';
import type { DesignWorkers } from '../design/workers.js';
import { BadRequest, Conflict, NotFound } from '../errors.js';
import { type FarmMachines, NO_REMOTE_MACHINES } from '../farm/farm-machines.js';
import { estimateFilament } from '../jobs/filament.js';
import { isFinal, isWaiting, type Job, type QueueConstraints } from '../jobs/job.js';
import type { KeptDesigns } from '../jobs/kept-designs.js';
import type { JobRunner, Upload } from '../jobs/runner.js';
import type { JobStore } from '../jobs/store.js';
import type { MachineObserver } from '../machines/observer.js';
import type { MachineRegistry, RegisteredMachine } from '../machines/registry.js';
import type { ServiceMetrics } from '../metrics.js';
import { uploadFilament } from '../slicer/pipeline.js';
import { withSpools } from '../spoolman/filaments.js';
import type { Assignment } from '../spoolman/store.js';
import { claimJobs, fitsMachine } from './job-routing.js';
import { assertMayManage, normalised } from './job-rules.js';
import type { FarmQueue, QueueChange, QueuedJobView, QueueSubmission } from './queue.js';
import {
  candidates,
  type DesignNeeds,
  explainNoCandidate,
  factsOf,
  gramsOf,
  heldBySpool,
  type MachineFacts,
  type SpoolFacts,
  sameFacts,
} from './routing.js';
import { SerialTask } from './serial-task.js';

export interface QueueServiceOptions {
  store: JobStore;
  /** Where waiting jobs' designs are kept: the database, readable by every instance of the farm. */
  keptDesigns: KeptDesigns;
  /**
   * The other instances' machines, alive or not (admission considers every configured machine of the
   * farm; a dead instance's claims go back to the queue); none by default (one host).
   */
  farm?: FarmMachines;
  /**
   * How often the queue looks at the farm without being told: waiting jobs another instance queued,
   * claims a dead instance left. The heartbeat interval; 0 (tests of one host) never.
   */
  pollIntervalMs?: number;
  runner: JobRunner;
  /** Where designs are measured: off the event loop, within the configured `[server]` limits. */
  designs: DesignWorkers;
  machines: MachineRegistry;
  observer: MachineObserver;
  metrics: ServiceMetrics;
  dataDir: string;
  logger: Logger;
  /** The Spoolman spool the machine prints from now (the spool rule of routing.ts), when configured. */
  spoolOf?: (entry: RegisteredMachine) => SpoolFacts | undefined;
  /** The machine's assigned Spoolman spools (their filaments replace the configured ones for routing). */
  spoolsOf?: (machineId: string) => readonly Assignment[];
  /** Calls the listener whenever a machine's spool changed (a waiting job may fit now). */
  onSpoolChange?: (listener: () => void) => () => void;
}

export class QueueService implements FarmQueue {
  /** Where waiting jobs' designs were kept on disk before they moved to the database (imported at start). */
  private readonly legacyDesignDir: string;
  private readonly listeners = new Set<(change: QueueChange) => void>();
  /** Job id → place in the queue, refreshed after every change. */
  private positions = new Map<string, number>();
  /** Dispatch rounds never overlap (see schedule). */
  private readonly rounds = new SerialTask(
    () =>
      this.dispatchRound().catch((error: unknown) => {
        this.options.logger.error({ err: error }, 'queue dispatch failed');
      }),
    () => this.closed,
  );
  /** Looks at the farm, one at a time (see wake). */
  private readonly looks = new SerialTask(
    () => this.lookAtFarm(),
    () => this.closed,
  );
  private closed = false;
  private unsubscribe: (() => void)[] = [];
  /** The last list() answer and the stamp and facts it was built from (see list()). */
  private keptList: {
    stamp: string;
    local: readonly MachineFacts[];
    remote: unknown;
    views: readonly QueuedJobView[];
  } | null = null;
  private readonly farm: FarmMachines;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: QueueServiceOptions) {
    this.legacyDesignDir = join(options.dataDir, 'queue');
    this.farm = options.farm ?? NO_REMOTE_MACHINES;
  }

  /**
   * Moves designs a previous version kept on disk into the database, loads the waiting jobs and starts
   * dispatching whenever a machine becomes ready or the farm's queue changed.
   */
  async start(): Promise<void> {
    const { keptDesigns, logger, pollIntervalMs } = this.options;
    const moved = await keptDesigns.importFromDisk(this.legacyDesignDir);
    if (moved > 0) logger.info({ designs: moved }, 'queued designs moved from the data dir to the database');
    await keptDesigns.dropOrphans();
    await this.refreshOrder();
    this.unsubscribe.push(
      this.options.observer.onChange((change) => {
        if (change.kind === 'state' && change.machine.ready) this.schedule();
      }),
    );
    if (pollIntervalMs) {
      this.timer = setInterval(() => this.wake(), pollIntervalMs);
      this.timer.unref();
    }
    if (this.options.onSpoolChange) this.unsubscribe.push(this.options.onSpoolChange(() => this.schedule()));
    this.schedule();
  }

  /** Stops dispatching and waits for a dispatch round under way. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    for (const unsubscribe of this.unsubscribe) unsubscribe();
    await this.looks.idle();
    await this.rounds.idle();
  }

  /** Another instance changed the shared queue: looks at the farm now rather than at the next poll. */
  wake(): void {
    this.looks.run();
  }

  /**
   * One look at the farm (every poll interval): claims that dead instances left before their machines had
   * the job go back to the queue (one statement: several instances doing it at once return each job
   * once), and a dispatch round picks up what other instances queued. Bounded: two or three queries.
   */
  private async lookAtFarm(): Promise<void> {
    try {
      const dead = this.farm
        .remote()
        .filter((machine) => !machine.alive)
        .map((machine) => machine.id);
      for (const job of await this.options.store.returnClaimed(dead)) {
        this.options.logger.warn({ job: job.id }, 'job claimed by a dead instance goes back to the queue');
        this.options.runner.changed(job);
        this.emit({ reason: 'returned', jobId: job.id, machineId: null });
      }
      await this.refreshOrder();
      this.schedule();
    } catch (error) {
      this.options.logger.warn({ err: error }, 'queue could not read the farm; retrying at the next look');
    }
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
    this.assertSomeMachineFits(constraints, design);
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
    // The design first, then the row: a crash in between leaves orphan chunks (removed at a later start),
    // never a job without its design.
    await this.options.keptDesigns.keep(id, upload.path);
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
        queue: { priority: submission.priority, constraints },
        owner,
        filament,
      });
    } catch (error) {
      await this.options.keptDesigns.drop(id);
      throw error;
    }
    // The queue has taken the upload over: its file is no longer needed.
    await rm(upload.path, { force: true });
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
    const stamp = await this.options.store.changeStamp();
    const local = this.facts();
    // The mirror answers the same array until a remote machine changed, so its identity is the key.
    const remote = this.farm.remote();
    const facts = [...local, ...remote.map((machine) => machine.facts)];
    const kept = this.keptList;
    if (
      stamp !== undefined &&
      kept?.stamp === stamp &&
      kept.remote === remote &&
      sameFacts(kept.local, local)
    ) {
      return kept.views;
    }
    const waiting = await this.options.store.waiting();
    const views = Object.freeze(
      waiting.map((job, index) => {
        const machines = candidates(facts, job.constraints ?? {}, job.parameters.design ?? null);
        return {
          job,
          position: index + 1,
          machines,
          held: heldBySpool(
            facts,
            machines,
            job.constraints ?? {},
            job.parameters.design ?? null,
            gramsOf(job),
          ),
        };
      }),
    );
    this.keptList = stamp === undefined ? null : { stamp, local, remote, views };
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
    if (constraints) this.assertSomeMachineFits(constraints, current.parameters.design ?? null);
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
    if (!current.designKept) {
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
    this.rounds.run();
  }

  /** Gives each ready machine the first waiting job (by priority, then age) it can take. */
  private async dispatchRound(): Promise<void> {
    const { store, runner, machines, observer, metrics } = this.options;
    const free = observer.all().filter((machine) => machine.ready && !runner.isBusy(machine.id));
    if (free.length === 0) return;
    const waiting = await store.waiting();
    const facts = new Map(this.facts().map((fact) => [fact.id, fact]));
    const fits = (job: Job, machineId: string) => {
      const fact = facts.get(machineId);
      return fact !== undefined && fitsMachine(fact, job);
    };
    // Claims first, launches after: the slicing and upload work of the first jobs must not delay the
    // claims of the others when many machines become ready at once.
    const claims = await claimJobs({ store, machines, waiting, free, fits, stopped: () => this.closed });
    for (const { job, entry } of claims) {
      metrics.jobDispatched(entry.id, (Date.now() - Date.parse(job.queuedAt ?? job.createdAt)) / 1000);
      this.positions.delete(job.id);
      this.emit({ reason: 'dispatched', jobId: job.id, machineId: entry.id });
      this.launch(job, entry);
    }
    if (claims.length > 0) await this.refreshOrder();
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

  /**
   * Refuses (400) a job no configured machine of the farm (this instance's, and the others', also of a
   * stopped instance) could ever take: nothing waits forever.
   */
  private assertSomeMachineFits(constraints: QueueConstraints, design: DesignNeeds | null): void {
    const facts = [...this.facts(), ...this.farm.remote().map((machine) => machine.facts)];
    if (candidates(facts, constraints, design).length > 0) return;
    throw new BadRequest(explainNoCandidate(facts, constraints, design));
  }

  private facts(): MachineFacts[] {
    const { machines, observer } = this.options;
    return machines.machines.map((entry) =>
      factsOf(
        machines,
        entry,
        // The filaments as the machine list shows them: an assigned spool's material counts (filaments.ts).
        withSpools(
          observer.current(entry.id)?.status.hardware ?? entry.common,
          this.options.spoolsOf?.(entry.id) ?? [],
        ),
        this.options.spoolOf?.(entry),
      ),
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
