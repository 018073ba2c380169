/**
 * Turns the farm's event stream into notification events: job status transitions, machine state
 * transitions, and the two conditions that need a clock (a bed awaiting a clear for longer than
 * `awaiting_clear_minutes`, a job waiting longer than `queue_wait_minutes`), plus jobs no machine can take
 * any more. It subscribes to the bus and never does I/O inside a delivery (the bus calls it synchronously
 * from `publish`): whatever needs the queue runs afterwards, off the publisher's stack.
 */

import type { EventBus, EventSubscription, FarmEvent } from '../events/events.js';
import type { NotificationData, NotifyEvent } from './events.js';
import { jobFacts, jobNotification, machineNotification, type WireJob } from './facts.js';

/** One notification to hand to the dispatcher. */
export interface Noticed {
  event: NotifyEvent;
  machineId: string | null;
  data: NotificationData;
  timestamp: string;
}

export interface WatchOptions {
  bus: EventBus;
  /** How long a machine's bed may wait for a clear before `machine.awaiting_clear`. */
  awaitingClearMs(machineId: string): number;
  queueWaitMs: number;
  /** Jobs waiting in the queue, in wire shape, with the machines that can still take each. */
  waitingJobs(): Promise<{ job: WireJob; machines: string[] }[]>;
  /** The job currently on a machine (for `job.paused`), in wire shape. */
  currentJob(machineId: string): Promise<WireJob | null>;
  notice(noticed: Noticed): void;
  onError(error: unknown): void;
}

const JOB_EVENT_BY_STATUS: Record<string, NotifyEvent> = {
  printing: 'job.started',
  completed: 'job.completed',
  failed: 'job.failed',
  cancelled: 'job.cancelled',
};

export class FarmWatch {
  /** Last status seen per unfinished job (final jobs are forgotten). */
  private readonly jobStatus = new Map<string, string>();
  /** Last state name seen per machine. */
  private readonly machineState = new Map<string, string>();
  private readonly clearTimers = new Map<string, { since: string; timer: NodeJS.Timeout }>();
  private readonly waitTimers = new Map<string, NodeJS.Timeout>();
  /** Jobs already reported as unroutable (reported again only after they became routable). */
  private readonly unroutable = new Set<string>();
  private routingCheck: Promise<void> | null = null;
  private routingAgain = false;
  private subscription: EventSubscription | null = null;
  private closed = false;

  constructor(private readonly options: WatchOptions) {}

  /** Subscribes to the bus and arms the waiting-job timers of jobs already in the queue. */
  async start(): Promise<void> {
    this.subscription = this.options.bus.subscribe(
      { types: ['job.updated', 'machine.state', 'queue.changed'] },
      null,
      (event) => this.onEvent(event),
    );
    const waiting = await this.options.waitingJobs();
    for (const { job } of waiting) this.armWait(job);
    this.checkRouting();
  }

  close(): void {
    this.closed = true;
    this.subscription?.close();
    for (const { timer } of this.clearTimers.values()) clearTimeout(timer);
    for (const timer of this.waitTimers.values()) clearTimeout(timer);
    this.clearTimers.clear();
    this.waitTimers.clear();
  }

  private onEvent(event: FarmEvent): void {
    try {
      if (event.instance !== this.options.bus.instance) {
        // On a farm the stream carries every instance's events, and each instance notifies of its own;
        // another's only tells this one that a job it took is no longer waiting here.
        if (event.type === 'job.updated') {
          const job = event.data as unknown as WireJob;
          if (job.status !== 'queued' || job.machine_id !== null) this.disarmWait(job.id);
        }
        return;
      }
      if (event.type === 'job.updated') this.onJob(event.data as unknown as WireJob, event.time);
      else if (event.type === 'machine.state' && event.machine_id !== null) {
        this.onMachine(event.machine_id, event.data, event.time);
        this.checkRouting();
      } else if (event.type === 'queue.changed') this.checkRouting();
    } catch (error) {
      this.options.onError(error);
    }
  }

  private onJob(job: WireJob, time: string): void {
    const before = this.jobStatus.get(job.id);
    const final = job.status === 'completed' || job.status === 'failed' || job.status === 'cancelled';
    if (final) this.jobStatus.delete(job.id);
    else this.jobStatus.set(job.id, job.status);
    const event = JOB_EVENT_BY_STATUS[job.status];
    if (event && before !== job.status)
      this.emit(event, job.machine_id, jobNotification(event, jobFacts(job)), time);
    if (job.status === 'queued' && job.machine_id === null) this.armWait(job);
    else this.disarmWait(job.id);
  }

  private onMachine(id: string, data: Record<string, unknown>, time: string): void {
    const state = data.state as { state?: string; message?: string | null } | undefined;
    const name = state?.state ?? 'unknown';
    const before = this.machineState.get(id);
    if (name !== 'unknown') this.machineState.set(id, name);
    if (name !== before) {
      if (name === 'offline')
        this.emit('machine.offline', id, machineNotification('machine.offline', id, null), time);
      else if (name === 'failed') {
        this.emit(
          'machine.failed',
          id,
          machineNotification('machine.failed', id, state?.message ?? null),
          time,
        );
      } else if (before === 'offline' && name !== 'unknown') {
        this.emit('machine.online', id, machineNotification('machine.online', id, null), time);
      }
      if (name === 'paused' && data.busy === true) this.reportPause(id, time);
    }
    this.armClear(id, typeof data.awaiting_clear_since === 'string' ? data.awaiting_clear_since : null);
  }

  /** `job.paused`: the machine paused while a job of this service was on it. */
  private reportPause(machineId: string, time: string): void {
    void this.options.currentJob(machineId).then((job) => {
      if (job && !this.closed)
        this.emit('job.paused', machineId, jobNotification('job.paused', jobFacts(job)), time);
    }, this.options.onError);
  }

  private armClear(machineId: string, since: string | null): void {
    const armed = this.clearTimers.get(machineId);
    if (armed?.since === since) return;
    if (armed) clearTimeout(armed.timer);
    this.clearTimers.delete(machineId);
    if (since === null) return;
    const delay = Math.max(0, Date.parse(since) + this.options.awaitingClearMs(machineId) - Date.now());
    const timer = setTimeout(() => {
      this.clearTimers.delete(machineId);
      this.emit(
        'machine.awaiting_clear',
        machineId,
        machineNotification('machine.awaiting_clear', machineId, null, since),
        new Date().toISOString(),
      );
    }, delay);
    timer.unref();
    this.clearTimers.set(machineId, { since, timer });
  }

  private armWait(job: WireJob): void {
    this.disarmWait(job.id);
    const since = Date.parse(job.queued_at ?? job.created_at);
    const delay = Math.max(0, since + this.options.queueWaitMs - Date.now());
    const timer = setTimeout(() => {
      this.waitTimers.delete(job.id);
      void this.reportWaiting(job.id);
    }, delay);
    timer.unref();
    this.waitTimers.set(job.id, timer);
  }

  private disarmWait(jobId: string): void {
    const timer = this.waitTimers.get(jobId);
    if (timer) clearTimeout(timer);
    this.waitTimers.delete(jobId);
  }

  /** Reads the queue again when the timer fires: the job may have left it meanwhile. */
  private async reportWaiting(jobId: string): Promise<void> {
    try {
      const entry = (await this.options.waitingJobs()).find((waiting) => waiting.job.id === jobId);
      if (!entry || this.closed) return;
      const facts = jobFacts({ ...entry.job, dispatched_at: entry.job.queued_at ?? entry.job.created_at });
      this.emit('queue.waiting', null, jobNotification('queue.waiting', facts), new Date().toISOString());
    } catch (error) {
      this.options.onError(error);
    }
  }

  /** Finds waiting jobs no configured machine can take any more; one check at a time, coalesced. */
  private checkRouting(): void {
    if (this.closed) return;
    if (this.routingCheck) {
      this.routingAgain = true;
      return;
    }
    this.routingCheck = (async () => {
      do {
        this.routingAgain = false;
        const waiting = await this.options.waitingJobs();
        const stillWaiting = new Set(waiting.map((entry) => entry.job.id));
        for (const id of this.unroutable) if (!stillWaiting.has(id)) this.unroutable.delete(id);
        for (const { job, machines } of waiting) {
          if (machines.length > 0) {
            this.unroutable.delete(job.id);
          } else if (!this.unroutable.has(job.id)) {
            this.unroutable.add(job.id);
            this.emit(
              'queue.unroutable',
              null,
              jobNotification('queue.unroutable', jobFacts(job)),
              new Date().toISOString(),
            );
          }
        }
      } while (this.routingAgain && !this.closed);
    })()
      .catch(this.options.onError)
      .finally(() => {
        this.routingCheck = null;
      });
  }

  private emit(
    event: NotifyEvent,
    machineId: string | null,
    data: NotificationData,
    timestamp: string,
  ): void {
    if (!this.closed) this.options.notice({ event, machineId, data, timestamp });
  }
}
