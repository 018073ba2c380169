/**
 * Writes what this instance's machines look like to `farm_machines`, so every other instance of the farm
 * can list them (farm-machines.ts) and admit queued jobs for them.
 *
 * Writes are coalesced: a change (the observer's, a job's) asks for a flush, and flushes are at least
 * `minIntervalMs` apart, each one statement for every machine whose snapshot differs from what was last
 * written. A storm of temperature readings on a hundred machines is one write per interval, not one per
 * reading. A sweep at `sweepIntervalMs` catches what nobody announces (a camera coming back, a printer
 * learning its model) and retries a write that failed.
 */

import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { DialectName, JobDatabase } from '../jobs/database.js';
import type { MachineFacts } from '../queue/routing.js';
import { databaseNowMs } from './instances.js';

/** One machine of this instance, as the others will see it. */
export interface LocalMachineSnapshot {
  id: string;
  /** The machine's wire shape (as `GET /machines/{id}` answers it here), without `instance`. */
  info: object;
  facts: MachineFacts;
}

export interface PublisherOptions {
  dialect: DialectName;
  instance: string;
  /** Every machine this instance drives, as of now. */
  snapshots: () => LocalMachineSnapshot[];
  /** Least time between two writes. */
  minIntervalMs: number;
  /** Time between two sweeps. */
  sweepIntervalMs: number;
  logger: Logger;
}

export class FarmMachinePublisher {
  /** What was last written per machine id (info and facts JSON), to write only what changed. */
  private readonly written = new Map<string, string>();
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  private lastFlushMs = 0;
  private closed = false;

  constructor(
    private readonly db: Kysely<JobDatabase>,
    private readonly options: PublisherOptions,
  ) {}

  /**
   * Writes every machine once and forgets the rows of machines this instance no longer drives (removed
   * from its configuration), then keeps the rows current.
   */
  async start(): Promise<void> {
    const ids = this.options.snapshots().map((snapshot) => snapshot.id);
    let stale = this.db.deleteFrom('farm_machines').where('instance', '=', this.options.instance);
    if (ids.length > 0) stale = stale.where('machine_id', 'not in', ids);
    await stale.execute();
    await this.flush();
    this.sweeper = setInterval(() => this.changed(), this.options.sweepIntervalMs);
    this.sweeper.unref();
  }

  /** Something about a machine changed: it is written at the next flush (soon, never sooner than the limit). */
  changed(): void {
    if (this.closed || this.timer) return;
    const wait = Math.max(0, this.lastFlushMs + this.options.minIntervalMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.chain = this.chain.then(() => this.flush());
    }, wait);
    this.timer.unref();
  }

  /** Stops writing; waits for a write under way. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    clearInterval(this.sweeper);
    await this.chain;
  }

  private async flush(): Promise<void> {
    if (this.closed) return;
    this.lastFlushMs = Date.now();
    const { instance, dialect } = this.options;
    const pending = new Map<string, string>();
    const rows = [];
    for (const snapshot of this.options.snapshots()) {
      const info = JSON.stringify(snapshot.info);
      const facts = JSON.stringify(snapshot.facts);
      const key = `${info}\n${facts}`;
      if (this.written.get(snapshot.id) === key) continue;
      pending.set(snapshot.id, key);
      rows.push({ machine_id: snapshot.id, instance, info, facts, updated_ms: databaseNowMs(dialect) });
    }
    if (rows.length === 0) return;
    try {
      await this.db
        .insertInto('farm_machines')
        .values(rows)
        .onConflict((conflict) =>
          conflict
            .column('machine_id')
            .doUpdateSet({
              instance: (eb) => eb.ref('excluded.instance'),
              info: (eb) => eb.ref('excluded.info'),
              facts: (eb) => eb.ref('excluded.facts'),
              updated_ms: (eb) => eb.ref('excluded.updated_ms'),
            })
            // Only while this instance owns the machine: a process that was paused past the heartbeat
            // timeout, whose machines another instance took meanwhile, must not overwrite that one's rows.
            .where(
              sql<boolean>`exists (select 1 from machine_owners where machine_owners.machine_id = excluded.machine_id and machine_owners.instance = excluded.instance)`,
            ),
        )
        .execute();
      for (const [id, key] of pending) this.written.set(id, key);
    } catch (error) {
      this.options.logger.warn({ err: error }, 'writing the farm machine snapshots failed; retrying');
    }
  }
}
