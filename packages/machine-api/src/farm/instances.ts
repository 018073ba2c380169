/**
 * This instance's membership of the farm: its row in `instances`, kept alive by a heartbeat, and the
 * machine ids it drives in `machine_owners`. Machine ids are unique across the farm: joining fails when
 * an instance that is still alive (heartbeat younger than the timeout) owns one of ours. An instance
 * that restarts under the same name (after a crash too) takes its machines back at once, and one whose
 * heartbeat stopped gives its machines up to whichever instance is configured with them next.
 *
 * Every time is the database's clock, so hosts whose clocks disagree still agree on who is alive.
 */

import type { Kysely, RawBuilder } from 'kysely';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { JobDatabase } from '../jobs/database.js';
import type { DialectName } from '../jobs/migrations.js';

/** Key of the PostgreSQL transaction lock taken while an instance claims its machine ids. */
const JOIN_LOCK_KEY = 0x6d617069_01;

export interface MembershipOptions {
  name: string;
  /** Where other instances reach this one (until `announce` says better). */
  url: string;
  heartbeatTimeoutMs: number;
  machineIds: readonly string[];
  dialect: DialectName;
  logger: Logger;
}

export interface FarmInstance {
  name: string;
  url: string;
  /** The database's clock at its last heartbeat (0: it stopped cleanly). */
  heartbeatMs: number;
  alive: boolean;
}

/** A machine id of the farm with the instance that drives it, and whether that instance is alive. */
export interface MachineOwner {
  machineId: string;
  instance: string;
  /** Where the owner answers (for forwarding actions). */
  url: string;
  alive: boolean;
}

/** Another live instance owns one of this instance's machine ids. */
export class MachineOwnedElsewhere extends Error {}

/** The database's clock in milliseconds since 1970. */
export function databaseNowMs(dialect: DialectName): RawBuilder<number> {
  return dialect === 'postgres'
    ? sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`
    : sql<number>`cast(unixepoch('subsec') * 1000 as integer)`;
}

/** A third of the timeout: two beats may be lost (a busy database, a pause) before others see us dead. */
export function heartbeatIntervalMs(heartbeatTimeoutMs: number): number {
  return Math.max(200, Math.floor(heartbeatTimeoutMs / 3));
}

export class FarmMembership {
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;

  private constructor(
    private readonly db: Kysely<JobDatabase>,
    private readonly options: MembershipOptions,
  ) {}

  get name(): string {
    return this.options.name;
  }

  /** Registers the instance and claims its machine ids; throws MachineOwnedElsewhere on a conflict. */
  static async join(db: Kysely<JobDatabase>, options: MembershipOptions): Promise<FarmMembership> {
    const membership = new FarmMembership(db, options);
    await membership.claim();
    const interval = heartbeatIntervalMs(options.heartbeatTimeoutMs);
    membership.timer = setInterval(() => {
      membership.beating ??= membership.beat().finally(() => {
        membership.beating = undefined;
      });
    }, interval);
    membership.timer.unref();
    return membership;
  }

  private async claim(): Promise<void> {
    const { name, url, machineIds, dialect, heartbeatTimeoutMs } = this.options;
    const now = databaseNowMs(dialect);
    await this.db.transaction().execute(async (tx) => {
      // Two instances claiming the same id at once: the second waits for the first's commit, then sees it.
      if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(${JOIN_LOCK_KEY})`.execute(tx);
      await tx
        .insertInto('instances')
        .values({ name, url, started_ms: now, heartbeat_ms: now })
        .onConflict((conflict) =>
          conflict.column('name').doUpdateSet({ url, started_ms: now, heartbeat_ms: now }),
        )
        .execute();
      if (machineIds.length > 0) {
        const taken = await tx
          .selectFrom('machine_owners')
          .innerJoin('instances', 'instances.name', 'machine_owners.instance')
          .select(['machine_owners.machine_id', 'instances.name', 'instances.heartbeat_ms'])
          .select(now.as('now'))
          .where('machine_owners.machine_id', 'in', [...machineIds])
          .where('machine_owners.instance', '!=', name)
          .orderBy('machine_owners.machine_id')
          .execute();
        const live = taken.find((row) => row.heartbeat_ms > Number(row.now) - heartbeatTimeoutMs);
        if (live) {
          const ago = Math.max(0, Math.round((Number(live.now) - live.heartbeat_ms) / 1000));
          throw new MachineOwnedElsewhere(
            `machine "${live.machine_id}" is driven by instance "${live.name}", which is alive (last heartbeat ${ago} s ago); a machine id must be unique across the farm: rename it in one configuration or stop that instance`,
          );
        }
        for (const machineId of machineIds) {
          await tx
            .insertInto('machine_owners')
            .values({ machine_id: machineId, instance: name })
            .onConflict((conflict) => conflict.column('machine_id').doUpdateSet({ instance: name }))
            .execute();
        }
      }
      let released = tx.deleteFrom('machine_owners').where('instance', '=', name);
      if (machineIds.length > 0) released = released.where('machine_id', 'not in', [...machineIds]);
      await released.execute();
    });
  }

  /** Records where the instance answers, once it listens. */
  async announce(url: string): Promise<void> {
    this.options.url = url;
    await this.db.updateTable('instances').set({ url }).where('name', '=', this.options.name).execute();
  }

  private async beat(): Promise<void> {
    try {
      await this.db
        .updateTable('instances')
        .set({ heartbeat_ms: databaseNowMs(this.options.dialect) })
        .where('name', '=', this.options.name)
        .execute();
    } catch (error) {
      this.options.logger.warn({ err: error }, 'farm heartbeat failed; retrying at the next beat');
    }
  }

  /** Every instance of the farm, with whether its heartbeat is within the timeout. */
  async instances(): Promise<FarmInstance[]> {
    const rows = await this.db
      .selectFrom('instances')
      .select(['name', 'url', 'heartbeat_ms'])
      .select(databaseNowMs(this.options.dialect).as('now'))
      .orderBy('name')
      .execute();
    return rows.map((row) => ({
      name: row.name,
      url: row.url,
      heartbeatMs: row.heartbeat_ms,
      alive: row.heartbeat_ms > Number(row.now) - this.options.heartbeatTimeoutMs,
    }));
  }

  /**
   * Every machine id of the farm with its owner: an owner whose heartbeat is older than the timeout (or
   * that left) is dead, so the others know within the timeout that its machines are gone.
   */
  async owners(): Promise<MachineOwner[]> {
    const rows = await this.db
      .selectFrom('machine_owners')
      .innerJoin('instances', 'instances.name', 'machine_owners.instance')
      .select(['machine_owners.machine_id', 'instances.name', 'instances.url', 'instances.heartbeat_ms'])
      .select(databaseNowMs(this.options.dialect).as('now'))
      .orderBy('machine_owners.machine_id')
      .execute();
    return rows.map((row) => ({
      machineId: row.machine_id,
      instance: row.name,
      url: row.url,
      alive: row.heartbeat_ms > Number(row.now) - this.options.heartbeatTimeoutMs,
    }));
  }

  /** Stops the heartbeat without saying so, as a killed process would (tests of a dead instance). */
  stopHeartbeatForTest(): void {
    clearInterval(this.timer);
  }

  /** Stops the heartbeat and says so in the database, so the others list this instance's machines offline at once. */
  async leave(): Promise<void> {
    clearInterval(this.timer);
    await this.beating;
    await this.db
      .updateTable('instances')
      .set({ heartbeat_ms: 0 })
      .where('name', '=', this.options.name)
      .execute();
  }
}
