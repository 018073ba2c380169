/**
 * The machines of the OTHER instances of the farm, mirrored in memory so that a request never reads the
 * database for them (`GET /machines` stays as fast as with local machines alone), and queue admission can
 * consider every machine of the farm.
 *
 * Refreshed by a poll every `refreshIntervalMs` (one second at most): a small query of every remote row's
 * owner, write time and owner's heartbeat, then the snapshots of the rows whose write time moved. A poll
 * rather than LISTEN/NOTIFY because liveness is a heartbeat's age: an instance that dies sends nothing,
 * so only a look at the clock tells the others its machines are gone, and that look is this poll. The
 * rows are written at most every half second per instance (publisher.ts), so the mirror lags the owner by
 * about a second and a half at worst.
 */

import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { DialectName, JobDatabase } from '../jobs/database.js';
import type { MachineFacts } from '../queue/routing.js';
import { databaseNowMs } from './instances.js';

/** A machine driven by another instance of the farm. Replaced (never changed in place) when anything changes. */
export interface RemoteMachine {
  id: string;
  instance: string;
  /** Where its instance answers (actions on the machine are forwarded there). */
  url: string;
  /**
   * Whether its instance's heartbeat is within the timeout and the snapshot was written since that
   * instance (re)started; a dead instance's machines are offline.
   */
  alive: boolean;
  /** Its wire shape (`MachineInfoResponse` without `instance`) as its instance last wrote it. */
  info: Record<string, unknown>;
  /** Its routing facts (queue/routing.ts), for queue admission on any instance. */
  facts: MachineFacts;
  /** The database's clock when its instance wrote the snapshot. */
  updatedMs: number;
}

/** What the rest of the service asks about the farm's other machines. */
export interface FarmMachines {
  /** Every machine of the other instances, by id; the same array until something changed. */
  remote(): readonly RemoteMachine[];
  /** The remote machine with this id, if another instance drives it. */
  get(id: string): RemoteMachine | undefined;
}

/** The farm of one instance alone (SQLite): no other machines. */
const NONE: readonly RemoteMachine[] = Object.freeze([]);
export const NO_REMOTE_MACHINES: FarmMachines = {
  // One array for ever, as the interface promises (a cache keyed on it must keep hitting).
  remote: () => NONE,
  get: () => undefined,
};

export interface MirrorOptions {
  dialect: DialectName;
  /** This instance's name: its own machines are not mirrored. */
  instance: string;
  heartbeatTimeoutMs: number;
  refreshIntervalMs: number;
  logger: Logger;
}

/** Bound on the ids of one snapshot read (a statement's parameters). */
const READ_CHUNK = 500;

export class FarmMachineMirror implements FarmMachines {
  private list: readonly RemoteMachine[] = [];
  private byId = new Map<string, RemoteMachine>();
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;

  constructor(
    private readonly db: Kysely<JobDatabase>,
    private readonly options: MirrorOptions,
  ) {}

  remote(): readonly RemoteMachine[] {
    return this.list;
  }

  get(id: string): RemoteMachine | undefined {
    return this.byId.get(id);
  }

  /** Reads the farm once, then keeps reading it in the background. */
  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.options.refreshIntervalMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.refreshing;
  }

  /** Reads what changed since the last refresh (joining one under way). Never throws. */
  refresh(): Promise<void> {
    this.refreshing ??= this.read()
      .catch((error: unknown) => {
        this.options.logger.warn({ err: error }, 'reading the farm machines failed; retrying');
      })
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }

  private async read(): Promise<void> {
    const { dialect, instance, heartbeatTimeoutMs } = this.options;
    // Only rows of each machine's current owner: a row left by an instance that no longer drives the
    // machine (it moved to another instance, or out of every configuration) is not listed.
    const heads = await this.db
      .selectFrom('farm_machines as fm')
      .innerJoin('machine_owners as mo', (join) =>
        join.onRef('mo.machine_id', '=', 'fm.machine_id').onRef('mo.instance', '=', 'fm.instance'),
      )
      .innerJoin('instances as i', 'i.name', 'fm.instance')
      .select(['fm.machine_id', 'fm.instance', 'fm.updated_ms', 'i.url', 'i.heartbeat_ms', 'i.started_ms'])
      .select(databaseNowMs(dialect).as('now'))
      .where('fm.instance', '!=', instance)
      .orderBy('fm.machine_id')
      .execute();
    const stale = heads.filter((head) => this.byId.get(head.machine_id)?.updatedMs !== head.updated_ms);
    const snapshots = new Map<string, { info: string; facts: string; updated_ms: number }>();
    for (let start = 0; start < stale.length; start += READ_CHUNK) {
      const ids = stale.slice(start, start + READ_CHUNK).map((head) => head.machine_id);
      const rows = await this.db
        .selectFrom('farm_machines')
        .select(['machine_id', 'info', 'facts', 'updated_ms'])
        .where('machine_id', 'in', ids)
        .execute();
      for (const row of rows) snapshots.set(row.machine_id, row);
    }
    let changed = heads.length !== this.list.length;
    const next: RemoteMachine[] = [];
    for (const head of heads) {
      // An instance that (re)started counts as alive for a machine once it wrote the machine anew: until
      // then the row is what it wrote before it died, and its URL may not be final yet (announce).
      const alive =
        head.heartbeat_ms > Number(head.now) - heartbeatTimeoutMs && head.updated_ms >= head.started_ms;
      const before = this.byId.get(head.machine_id);
      const row = snapshots.get(head.machine_id);
      let machine = before;
      if (row) machine = this.parse(head.machine_id, head.instance, head.url, alive, row) ?? before;
      if (!machine) continue;
      if (machine.alive !== alive || machine.url !== head.url || machine.instance !== head.instance) {
        machine = { ...machine, alive, url: head.url, instance: head.instance };
      }
      if (machine !== before) changed = true;
      next.push(machine);
    }
    if (!changed) return;
    this.list = next;
    this.byId = new Map(next.map((machine) => [machine.id, machine]));
  }

  private parse(
    id: string,
    instance: string,
    url: string,
    alive: boolean,
    row: { info: string; facts: string; updated_ms: number },
  ): RemoteMachine | undefined {
    try {
      const info = JSON.parse(row.info) as Record<string, unknown>;
      const facts = JSON.parse(row.facts) as MachineFacts;
      return { id, instance, url, alive, info, facts, updatedMs: row.updated_ms };
    } catch (error) {
      this.options.logger.warn({ err: error, machine: id }, 'unreadable farm machine snapshot; skipped');
      return undefined;
    }
  }
}
