/**
 * Live events: what changed in the farm, as one ordered stream with resumable ids.
 *
 * Producers (the machine observer, the job runner, the queue) `publish`; consumers (`GET /events`, tests,
 * later a dashboard) `subscribe` with an optional cursor. Ids increase by one per event within a run and
 * start above every id of a previous run (they are seeded from the clock), so a cursor from before a
 * restart is recognised as too old instead of being confused with a new event.
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
  /** ISO 8601 time of publication. */
  time: string;
  machine_id: string | null;
  job_id: string | null;
  /** The event's payload, already in wire shape (see the `Event` schema). */
  data: Record<string, unknown>;
}

export type NewEvent = Omit<FarmEvent, 'id' | 'time'>;

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
  /** Id of the newest event (or the seed before the first one). */
  readonly lastId: number;
  /** Records the event in the history and delivers it to every matching subscriber, synchronously. */
  publish(event: NewEvent): FarmEvent;
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
}

/** Whether `event` passes `filter`. */
export function matches(filter: EventFilter, event: FarmEvent): boolean {
  if (event.type === 'reset') return true;
  if (filter.machineId !== undefined && event.machine_id !== filter.machineId) return false;
  if (filter.types !== undefined && !filter.types.includes(event.type)) return false;
  return true;
}
