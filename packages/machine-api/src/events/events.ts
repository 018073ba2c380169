/**
 * Live events: what changed in the farm, as one ordered stream with resumable ids.
 *
 * Producers (the machine observer, the job runner, the queue) `publish`; consumers (`GET /events`, the
 * notification watch, tests) `subscribe` with an optional cursor. Two buses implement it: one instance
 * alone keeps the stream in memory (history.ts: ids increase by one per event within a run and start above
 * every id of a previous run, seeded from the clock, so a cursor from before a restart is recognised as too
 * old instead of being confused with a new event); instances sharing a PostgreSQL database keep one stream
 * for the whole farm there (shared.ts), each event tagged with the instance that published it.
 */

/** Every event type a client can filter on (`?types=`). */
export const EVENT_TYPES = [
  /** A machine's state, readiness or job occupancy changed (`data`: state, ready, busy, progress, …). */
  'machine.state',
  /** Only a machine's progress changed. */
  'machine.progress',
  /**
   * A machine's temperatures changed: sent as they arrive, at most one per machine per second on average
   * (never two within half a second); a change that comes faster is held back and sent, with the latest
   * readings, as soon as the rate allows.
   */
  'machine.temperatures',
  /** A job was created or changed status, message, position or progress (`data`: the job). */
  'job.updated',
  /** The queue changed: a job was queued, dispatched, cancelled, re-prioritised or re-queued. */
  'queue.changed',
  /** Sent alone to a client whose `Last-Event-ID` is no longer in the history: reload state, then go on. */
  'reset',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface FarmEvent {
  id: number;
  type: EventType;
  /** The instance that published it (`[server] instance`); a `reset` names the instance that answers. */
  instance: string;
  /** ISO 8601 time of publication. */
  time: string;
  machine_id: string | null;
  job_id: string | null;
  /** The event's payload, already in wire shape (see the `Event` schema). */
  data: Record<string, unknown>;
}

export type NewEvent = Omit<FarmEvent, 'id' | 'time' | 'instance'>;

export interface EventFilter {
  /** Only events about this machine (events without a machine are excluded). */
  machineId?: string;
  /** Only these types (`reset` is always delivered). */
  types?: readonly EventType[];
}

export interface EventSubscription {
  /** Stops delivery; idempotent. */
  close(): void;
}

export interface EventBus {
  /** This instance's name: the `instance` of every event it publishes. */
  readonly instance: string;
  /**
   * Records the event in the history and delivers it to every matching subscriber: at once in memory,
   * once it is committed and read back on a farm (shared.ts).
   */
  publish(event: NewEvent): void;
  /**
   * Delivers, in order and without gaps: with `after`, every matching event after that id still in the
   * history (or a single `reset` event when the id is not resumable), then every new matching event.
   * `deliver` must not throw; it runs synchronously inside `publish`.
   */
  subscribe(
    filter: EventFilter,
    after: number | null,
    deliver: (event: FarmEvent) => void,
  ): EventSubscription;
  /** The newest `limit` retained events matching `filter`, oldest first (no `reset`). */
  recent(filter: EventFilter, limit: number): FarmEvent[];
  /**
   * Resolves once `subscribe` and `recent` see every event this instance published before the call and,
   * given `id` (a client's `Last-Event-ID`, perhaps first seen on another instance), every event up to it
   * that exists. Never rejects; on a farm whose database does not answer it gives up after a bound.
   */
  settle(id?: number): Promise<void>;
  /** Stops the bus: on a farm, writes what is still pending (bounded in time) and stops listening. */
  close(): Promise<void>;
}

/** Whether `event` passes `filter`. */
export function matches(filter: EventFilter, event: FarmEvent): boolean {
  if (event.type === 'reset') return true;
  if (filter.machineId !== undefined && event.machine_id !== filter.machineId) return false;
  if (filter.types !== undefined && !filter.types.includes(event.type)) return false;
  return true;
}
