/**
 * The in-process `EventBus`: a bounded history for resumption plus synchronous fan-out. One instance alone
 * publishes into it directly; on a farm it is each instance's copy of the shared stream (shared.ts), fed
 * with `append` in the database's id order.
 *
 * Retention: an event is kept while it is among the newest `minEvents` OR younger than `minAgeMs`
 * (the "at least the last 10 000 events or 1 hour"), and never beyond `maxEvents`, which bounds
 * memory when a busy hour produces more. Ids are consecutive, so finding a cursor is arithmetic; a copy
 * that is handed a gap (events pruned before it read them) drops what it holds and tells its subscribers
 * to reload, rather than resume anyone across the hole.
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
  /**
   * The id before the first event; defaults to the clock in microseconds (above any earlier run's ids).
   * Null: not known yet (a copy of an empty shared stream), the first appended event sets it.
   */
  seed?: number | null;
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
  private last: number | null;
  /**
   * Subscribers grouped by their machine filter once, at subscription, so that publishing visits only those
   * an event can concern: the unfiltered ones plus those of its machine.
   */
  private readonly anyMachine = new Set<Subscriber>();
  private readonly byMachine = new Map<string, Set<Subscriber>>();

  constructor(
    readonly instance: string,
    private readonly options: HistoryOptions = DEFAULT_HISTORY,
  ) {
    this.last = options.seed === undefined ? Date.now() * 1000 : options.seed;
  }

  /** Id of the newest event (or the seed before the first one; 0 while unknown). */
  get lastId(): number {
    return this.last ?? 0;
  }

  /** Number of events a resuming client can still get. */
  get size(): number {
    return this.events.length - this.head;
  }

  publish(event: NewEvent): FarmEvent {
    const stored: FarmEvent = {
      id: this.lastId + 1,
      time: new Date().toISOString(),
      instance: this.instance,
      ...event,
    };
    this.append(stored);
    return stored;
  }

  /**
   * Adds an event numbered elsewhere (the shared stream) and delivers it. Ids must increase; one already
   * held is ignored, and a gap makes every cursor before it unresumable (see the header).
   */
  append(stored: FarmEvent): void {
    if (this.last !== null && stored.id <= this.last) return;
    if (this.last !== null && stored.id !== this.last + 1) this.dropBefore(stored.id);
    this.last = stored.id;
    this.events.push(stored);
    this.trim(Date.now());
    this.deliverTo(this.anyMachine, stored);
    const machineId = stored.machine_id;
    if (machineId !== null) {
      const group = this.byMachine.get(machineId);
      if (group) this.deliverTo(group, stored);
    }
  }

  /** Forgets every held event and sends each subscriber a `reset` whose id resumes at `firstKept`. */
  private dropBefore(firstKept: number): void {
    const missed = `${(this.last ?? 0) + 1}–${firstKept - 1}`;
    this.events = [];
    this.head = 0;
    const reset = this.reset(
      firstKept - 1,
      `events ${missed} left the history before this instance could read them; reload the state, then continue from this event`,
    );
    for (const group of [this.anyMachine, ...this.byMachine.values()]) {
      for (const subscriber of group) subscriber.deliver(reset);
    }
  }

  private reset(id: number, message: string): FarmEvent {
    return {
      id,
      type: 'reset',
      instance: this.instance,
      time: new Date().toISOString(),
      machine_id: null,
      job_id: null,
      data: { message },
    };
  }

  /** Nothing waits in memory: published events are already delivered. */
  async settle(): Promise<void> {}

  async close(): Promise<void> {}

  subscribe(
    filter: EventFilter,
    after: number | null,
    deliver: (event: FarmEvent) => void,
  ): EventSubscription {
    if (after !== null) {
      const replay = this.after(after);
      if (replay === null) {
        deliver(
          this.reset(
            this.lastId,
            `event ${after} is no longer in the history (it keeps at least the last ${this.options.minEvents} events or ${this.options.minAgeMs / 60_000} minutes); reload the state, then continue from this event`,
          ),
        );
      } else {
        for (const event of replay) if (matches(filter, event)) deliver(event);
      }
    }
    // Replay and registration happen in one synchronous step: no event can fall in between.
    const subscriber: Subscriber = {
      types: filter.types ? new Set(filter.types) : null,
      deliver,
    };
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
    if (this.last === null) return null;
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
