/**
 * The observed state of every machine, kept as one cached snapshot per machine with change detection.
 *
 * Sources, in order of preference: what a backend pushes (`Machine.onStatusChange`: Moonraker's websocket,
 * Bambu's MQTT reports, the Noop simulator's own transitions) triggers an immediate read of that machine's
 * `status()`; a slow poll covers backends that push nothing and devices that went silent; and any status
 * read elsewhere (e.g. by `GET /machines`) is recorded too. Listeners (the event stream, the queue's
 * dispatcher) hear only real changes. The snapshot is meant to be read instead of asking every backend
 * per request.
 *
 * `ready` is the service's rule, not the device's: the device is idle, no job of this service is on its
 * way to it, and nobody still has to confirm that the bed is clear after the last print.
 */

import type { Logger } from 'pino';
import type { MachineState, MachineStatus, Temperature } from './machine.js';
import type { MachineRegistry, RegisteredMachine } from './registry.js';

export interface ObservedMachine {
  id: string;
  status: MachineStatus;
  /** Idle, no job on its way to it, and the bed confirmed clear: it may take a new job. */
  ready: boolean;
  /** A job of this service is being sliced for, uploaded to or printed by this machine. */
  busy: boolean;
  /** Since when the bed waits for `POST /machines/{id}/clear` (ISO 8601); null when confirmed clear. */
  awaitingClearSince: string | null;
  /** When the machine was first seen offline in its current offline spell (epoch ms); null when online. */
  offlineSince: number | null;
}

export type MachineChange =
  /** `state`, `ready` or `busy` changed (the first observation counts as a change). */
  | { kind: 'state'; machine: ObservedMachine }
  | { kind: 'progress'; machine: ObservedMachine }
  /** One per machine per `temperatureIntervalMs` on average (see `temperaturesDue`). */
  | { kind: 'temperatures'; machine: ObservedMachine };

export interface ObserverOptions {
  /** How long one status read may take before the machine counts as offline. */
  statusTimeoutMs: number;
  /** Interval of the fallback poll of every machine. */
  pollIntervalMs: number;
  /** Time per temperature change reported for one machine, on average (see `temperaturesDue`). */
  temperatureIntervalMs: number;
  logger: Logger;
}

const UNKNOWN: MachineStatus = { state: { state: 'unknown' }, progress: null, temperatures: {}, extra: null };
const OFFLINE: MachineStatus = { state: { state: 'offline' }, progress: null, temperatures: {}, extra: null };

interface Slot {
  entry: RegisteredMachine;
  current: ObservedMachine;
  observed: boolean;
  /** A status read is under way. */
  reading: Promise<ObservedMachine> | null;
  /** The one read queued behind `reading`, shared by every push and poll that arrived during it. */
  following: Promise<ObservedMachine> | null;
  /** When a status was last recorded (epoch ms); 0 before the first. */
  recordedAt: number;
  /** When the next temperature report is due (epoch ms; see `temperaturesDue`); 0 before the first. */
  temperatureDue: number;
  /** Temperatures last reported to listeners (the snapshot itself always has the latest). */
  reportedTemperatures: Record<string, Temperature>;
  /** Reports a change held back by the limit once it may be reported (see `temperaturesDue`). */
  temperatureTimer: NodeJS.Timeout | null;
  unsubscribe: (() => void) | null;
}

export class MachineObserver {
  private readonly slots = new Map<string, Slot>();
  private readonly listeners = new Set<(change: MachineChange) => void>();
  private poller: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly registry: MachineRegistry,
    private readonly options: ObserverOptions,
  ) {
    for (const entry of registry.machines) {
      this.slots.set(entry.id, {
        entry,
        current: {
          id: entry.id,
          status: UNKNOWN,
          ready: false,
          busy: false,
          awaitingClearSince: null,
          offlineSince: null,
        },
        observed: false,
        reading: null,
        following: null,
        recordedAt: 0,
        temperatureDue: 0,
        reportedTemperatures: {},
        temperatureTimer: null,
        unsubscribe: null,
      });
    }
  }

  /** The cached snapshot of a configured machine (`unknown` until first read). */
  current(id: string): ObservedMachine | undefined {
    return this.slots.get(id)?.current;
  }

  /**
   * The snapshot of a configured machine if it is fresh: a status was recorded within the last fallback
   * poll plus one status timeout (a healthy machine is re-read at least that often, and a hanging one is
   * recorded `offline` when its read times out). Otherwise — never read, or the snapshot went stale — the
   * machine is read now, joining a read under way; that read is bounded by the machine's own status timeout,
   * so a machine that hangs never delays another's answer and is reported `offline`.
   */
  fresh(id: string, now = Date.now()): ObservedMachine | Promise<ObservedMachine> {
    const slot = this.slots.get(id);
    if (!slot) return Promise.reject(new Error(`no machine "${id}"`));
    if (slot.recordedAt !== 0 && now - slot.recordedAt <= this.maxAgeMs) return slot.current;
    // A read under way answers this request; queueing behind it would only add a second deadline.
    return slot.reading ?? this.refresh(id);
  }

  private get maxAgeMs(): number {
    return this.options.pollIntervalMs + this.options.statusTimeoutMs;
  }

  /** Every machine's cached snapshot, in the registry's order (by id). */
  all(): ObservedMachine[] {
    return [...this.slots.values()].map((slot) => slot.current);
  }

  /** Calls `listener` for every change; returns the unsubscribe function. */
  onChange(listener: (change: MachineChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Subscribes to what backends push and starts the fallback poll; reads every machine once. */
  start(): void {
    for (const slot of this.slots.values()) {
      slot.unsubscribe = slot.entry.machine.onStatusChange?.(() => void this.refresh(slot.entry.id)) ?? null;
    }
    const poll = () => {
      for (const id of this.slots.keys()) void this.refresh(id);
    };
    poll();
    this.poller = setInterval(poll, this.options.pollIntervalMs);
    this.poller.unref();
  }

  close(): void {
    this.closed = true;
    if (this.poller) clearInterval(this.poller);
    for (const slot of this.slots.values()) {
      slot.unsubscribe?.();
      if (slot.temperatureTimer) clearTimeout(slot.temperatureTimer);
    }
    this.listeners.clear();
  }

  /**
   * Reads the machine's status now and records it. Never throws. During a read under way, what changed
   * may have been missed by it, so callers share one more read after it. Each caller waits for at most
   * those two reads, each bounded by the status timeout: a device slower than the poll interval (every
   * poll lands during a read) must not keep anyone waiting for good.
   */
  refresh(id: string): Promise<ObservedMachine> {
    const slot = this.slots.get(id);
    if (!slot) return Promise.reject(new Error(`no machine "${id}"`));
    if (slot.reading) {
      slot.following ??= slot.reading.then(() => {
        slot.following = null;
        return this.closed ? slot.current : this.refresh(id);
      });
      return slot.following;
    }
    const reading = (async () => {
      try {
        const [status] = await this.registry.statuses([slot.entry], this.options.statusTimeoutMs);
        this.record(id, status ?? OFFLINE);
        return slot.current;
      } finally {
        slot.reading = null;
      }
    })();
    slot.reading = reading;
    return reading;
  }

  /** Records a status read elsewhere; listeners hear what changed. */
  record(id: string, status: MachineStatus): ObservedMachine | undefined {
    const slot = this.slots.get(id);
    if (!slot || this.closed) return slot?.current;
    slot.recordedAt = Date.now();
    const before = slot.current;
    const offlineSince =
      status.state.state === 'offline' ? (before.offlineSince ?? Date.now()) : (null as number | null);
    this.update(slot, { ...before, status, offlineSince }, before);
    return slot.current;
  }

  /** Marks a machine as taken by a job of this service (or free again). */
  setBusy(id: string, busy: boolean): void {
    const slot = this.slots.get(id);
    if (slot && slot.current.busy !== busy) this.update(slot, { ...slot.current, busy }, slot.current);
  }

  /** Marks the bed as waiting for a confirmation since `since` (ISO 8601), or as confirmed clear (null). */
  setAwaitingClear(id: string, since: string | null): void {
    const slot = this.slots.get(id);
    if (slot && slot.current.awaitingClearSince !== since) {
      this.update(slot, { ...slot.current, awaitingClearSince: since }, slot.current);
    }
  }

  private update(slot: Slot, next: ObservedMachine, before: ObservedMachine): void {
    // A machine that refuses commands is not handed jobs it could not start.
    next.ready =
      next.status.state.state === 'idle' &&
      !next.busy &&
      next.awaitingClearSince === null &&
      next.status.capabilities?.control !== false;
    slot.current = next;
    const first = !slot.observed && next.status !== UNKNOWN;
    if (first) slot.observed = true;
    const changes: MachineChange[] = [];
    if (
      first ||
      !sameState(before.status.state, next.status.state) ||
      before.status.capabilities?.reason !== next.status.capabilities?.reason ||
      before.ready !== next.ready ||
      before.busy !== next.busy ||
      before.awaitingClearSince !== next.awaitingClearSince
    ) {
      changes.push({ kind: 'state', machine: next });
    } else if (before.status.progress !== next.status.progress) {
      changes.push({ kind: 'progress', machine: next });
    }
    if (this.temperaturesDue(slot, next)) changes.push({ kind: 'temperatures', machine: next });
    for (const change of changes) this.tell(change);
  }

  /**
   * Whether `next`'s temperatures are to be reported now. The limit is a rate with a tolerance, not a least
   * spacing: each report moves the machine's due time one interval on (from the later of the old due time
   * and now), and a change may be reported from half an interval before its due time. So a device that
   * sends a reading about once an interval has every one reported the moment it arrives, even one that
   * comes a little early (its clock, the network or this event loop jitter), and a device that reads
   * faster (Klipper sends its sensors several times a second) is still held to one report per interval:
   * never more than two in any one interval, and over an hour at most one more than the hour's intervals.
   * A least spacing of one interval instead held almost every reading of a once-a-second device back, by a
   * wait that drifted from reading to reading (bench: change→receipt p99 62–236 ms).
   * A change that comes too early is held back and reported when it may be (the latest readings then).
   */
  private temperaturesDue(slot: Slot, next: ObservedMachine): boolean {
    if (sameTemperatures(slot.reportedTemperatures, next.status.temperatures)) return false;
    const interval = this.options.temperatureIntervalMs;
    const now = Date.now();
    const wait = slot.temperatureDue - interval / 2 - now;
    if (wait <= 0) {
      slot.temperatureDue = Math.max(slot.temperatureDue, now) + interval;
      slot.reportedTemperatures = next.status.temperatures;
      return true;
    }
    slot.temperatureTimer ??= setTimeout(() => {
      slot.temperatureTimer = null;
      if (!this.closed && this.temperaturesDue(slot, slot.current)) {
        this.tell({ kind: 'temperatures', machine: slot.current });
      }
    }, wait);
    slot.temperatureTimer.unref();
    return false;
  }

  private tell(change: MachineChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (error) {
        this.options.logger.error(
          { err: error, machine: change.machine.id },
          'machine change listener failed',
        );
      }
    }
  }
}

function sameState(a: MachineState, b: MachineState): boolean {
  if (a.state !== b.state) return false;
  return a.state !== 'failed' || a.message === (b as typeof a).message;
}

function sameTemperatures(a: Record<string, Temperature>, b: Record<string, Temperature>): boolean {
  const keys = Object.keys(b);
  if (keys.length !== Object.keys(a).length) return false;
  return keys.every((key) => a[key]?.current === b[key]?.current && a[key]?.target === b[key]?.target);
}
