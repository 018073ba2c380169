/**
 * The in-process `EventBus`: a bounded history for resumption plus synchronous fan-out.
 *
 * Retention: an event is kept while it is among the newest `minEvents` OR younger than `minAgeMs`
 * (the "at least the last 10 000 events or 1 hour"), and never beyond `maxEvents`, which bounds
 * memory when a busy hour produces more. Ids are consecutive, so finding a cursor is arithmetic.
 */

import {
  type EventBus,
  type EventFilter,
  type EventSubscription,
  type EventType,
  type FarmEvent,
  matches,
  type NewEvent,
} from './events.js';

export interface HistoryOptions {
  minEvents: number;
  minAgeMs: number;
  maxEvents: number;
  /** The id before the first event; defaults to the clock in microseconds (above any earlier run's ids). */
  seed?: number;
}

export const DEFAULT_HISTORY: HistoryOptions = {
  minEvents: 10_000,
  minAgeMs: 60 * 60 * 1000,
  maxEvents: 200_000,
};

interface Subscriber {
  /** `filter.types` as a set (`reset` is never published, so it needs no exception here). */
  types: ReadonlySet<EventType> | null;
  deliver: (event: FarmEvent) => void;
}

export class EventHistory implements EventBus {
  private events: FarmEvent[] = [];
  /** Index of the oldest retained event in `events` (dropped ones are compacted away in batches). */
  private head = 0;
  private last: number;
  /**
   * Subscribers grouped by their machine filter once, at subscription, so that publishing visits only those
   * an event can concern: the unfiltered ones plus those of its machine.
   */
  private readonly anyMachine = new Set<Subscriber>();
  private readonly byMachine = new Map<string, Set<Subscriber>>();

  constructor(private readonly options: HistoryOptions = DEFAULT_HISTORY) {
    this.last = options.seed ?? Date.now() * 1000;
  }

  get lastId(): number {
    return this.last;
  }

  /** Number of events a resuming client can still get. */
  get size(): number {
    return this.events.length - this.head;
  }

  publish(event: NewEvent): FarmEvent {
    this.last += 1;
    const stored: FarmEvent = { id: this.last, time: new Date().toISOString(), ...event };
    this.events.push(stored);
    this.trim(Date.now());
    this.deliverTo(this.anyMachine, stored);
    const machineId = stored.machine_id;
    if (machineId !== null) {
      const group = this.byMachine.get(machineId);
      if (group) this.deliverTo(group, stored);
    }
    return stored;
  }

  subscribe(
    filter: EventFilter,
    after: number | null,
    deliver: (event: FarmEvent) => void,
  ): EventSubscription {
    if (after !== null) {
      const replay = this.after(after);
      if (replay === null) {
        deliver({
          id: this.last,
          type: 'reset',
          time: new Date().toISOString(),
          machine_id: null,
          job_id: null,
          data: {
            message: `event ${after} is no longer in the history (it keeps at least the last ${this.options.minEvents} events or ${this.options.minAgeMs / 60_000} minutes); reload the state, then continue from this event`,
          },
        });
      } else {
        for (const event of replay) if (matches(filter, event)) deliver(event);
      }
    }
    // Replay and registration happen in one synchronous step: no event can fall in between.
    const subscriber: Subscriber = { types: filter.types ? new Set(filter.types) : null, deliver };
    const { machineId } = filter;
    let group = this.anyMachine;
    if (machineId !== undefined) {
      group = this.byMachine.get(machineId) ?? new Set();
      this.byMachine.set(machineId, group);
    }
    group.add(subscriber);
    return {
      close: () => {
        group.delete(subscriber);
        if (machineId !== undefined && group.size === 0 && this.byMachine.get(machineId) === group) {
          this.byMachine.delete(machineId);
        }
      },
    };
  }

  private deliverTo(group: ReadonlySet<Subscriber>, event: FarmEvent): void {
    for (const subscriber of group) {
      if (subscriber.types === null || subscriber.types.has(event.type)) subscriber.deliver(event);
    }
  }

  recent(filter: EventFilter, limit: number): FarmEvent[] {
    const found: FarmEvent[] = [];
    // Newest first, so a small `limit` stops early even when the history holds 200 000 events.
    for (let i = this.events.length - 1; i >= this.head && found.length < limit; i--) {
      const event = this.events[i] as FarmEvent;
      if (matches(filter, event)) found.push(event);
    }
    return found.reverse();
  }

  /** The retained events after `id`, or null when `id` is not a cursor this history can resume from. */
  private after(id: number): FarmEvent[] | null {
    if (id === this.last) return [];
    if (id > this.last) return null;
    const oldest = this.events[this.head];
    // Resumable when every event after `id` is still here: the oldest retained one is `id + 1` or older.
    if (!oldest || id < oldest.id - 1) return null;
    return this.events.slice(this.head + (id - oldest.id + 1));
  }

  private trim(now: number): void {
    const { minEvents, minAgeMs, maxEvents } = this.options;
    while (this.size > minEvents) {
      const oldest = this.events[this.head];
      if (!oldest) break;
      const young = now - Date.parse(oldest.time) < minAgeMs;
      if (young && this.size <= maxEvents) break;
      this.head += 1;
    }
    if (this.head > 1024 && this.head * 2 > this.events.length) {
      this.events = this.events.slice(this.head);
      this.head = 0;
    }
  }
}
