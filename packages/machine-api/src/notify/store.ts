/**
 * SQL of the notification targets and the outbox (Kysely, portable). Every state change of a delivery is
 * one conditional UPDATE, so two workers (two processes on one database) never both send an attempt, and
 * a row once `delivered` is never touched again.
 */

import type { Kysely, Selectable } from 'kysely';
import type { JobDatabase } from '../jobs/database.js';
import type { NotificationDeliveriesTable } from './tables.js';
import type { Target, TargetSettings } from './targets.js';

export type DeliveryRow = Selectable<NotificationDeliveriesTable>;

export interface DeliveryFilter {
  targetId?: string;
  status?: string;
  limit: number;
}

export class NotifyStore {
  constructor(private readonly db: Kysely<JobDatabase>) {}

  // Targets

  async targets(): Promise<Target[]> {
    const rows = await this.db.selectFrom('notification_targets').selectAll().orderBy('name').execute();
    return rows.map(toTarget);
  }

  async target(id: string): Promise<Target | undefined> {
    const row = await this.db
      .selectFrom('notification_targets')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toTarget(row);
  }

  async targetNamed(name: string): Promise<Target | undefined> {
    const row = await this.db
      .selectFrom('notification_targets')
      .selectAll()
      .where('name', '=', name)
      .executeTakeFirst();
    return row && toTarget(row);
  }

  async insertTarget(target: Target): Promise<void> {
    await this.db
      .insertInto('notification_targets')
      .values({
        id: target.id,
        name: target.settings.name,
        source: target.source,
        settings: JSON.stringify(target.settings),
        created_at: target.createdAt,
        updated_at: target.updatedAt,
      })
      .execute();
  }

  async updateTarget(
    id: string,
    settings: TargetSettings,
    at: string,
    source?: Target['source'],
  ): Promise<void> {
    await this.db
      .updateTable('notification_targets')
      .set({
        name: settings.name,
        settings: JSON.stringify(settings),
        updated_at: at,
        ...(source ? { source } : {}),
      })
      .where('id', '=', id)
      .execute();
  }

  /** Removes the target; its pending deliveries fail (the log keeps them). */
  async deleteTarget(id: string): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const deleted = await tx.deleteFrom('notification_targets').where('id', '=', id).executeTakeFirst();
      await tx
        .updateTable('notification_deliveries')
        .set({
          status: 'failed',
          next_attempt_at: null,
          hold_until: null,
          error: 'the target was removed',
          delivered_at: null,
        })
        .where('target_id', '=', id)
        .where('status', '=', 'pending')
        .execute();
      return Number(deleted.numDeletedRows) > 0;
    });
  }

  // Outbox

  async enqueue(rows: DeliveryRow[]): Promise<void> {
    if (rows.length > 0) await this.db.insertInto('notification_deliveries').values(rows).execute();
  }

  /** Targets that have a delivery that may be attempted now. */
  async targetsWithDueDeliveries(now: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('notification_deliveries')
      .select('target_id')
      .where('status', '=', 'pending')
      .where('hold_until', 'is', null)
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
      .groupBy('target_id')
      .execute();
    return rows.map((row) => row.target_id);
  }

  /**
   * Claims the target's oldest due delivery for one attempt: counts the attempt and leases the row until
   * `leaseUntil` (a worker that dies mid-attempt leaves it to be retried after that, with the same id).
   */
  async claimNext(targetId: string, now: string, leaseUntil: string): Promise<DeliveryRow | undefined> {
    for (;;) {
      const next = await this.db
        .selectFrom('notification_deliveries')
        .selectAll()
        .where('target_id', '=', targetId)
        .where('status', '=', 'pending')
        .where('hold_until', 'is', null)
        .where('next_attempt_at', '<=', now)
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
        .orderBy('created_at')
        .orderBy('id')
        .limit(1)
        .executeTakeFirst();
      if (!next) return undefined;
      const claimed = await this.db
        .updateTable('notification_deliveries')
        .set({ attempts: next.attempts + 1, lease_until: leaseUntil })
        .where('id', '=', next.id)
        .where('status', '=', 'pending')
        .where('attempts', '=', next.attempts)
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) === 1)
        return { ...next, attempts: next.attempts + 1, lease_until: leaseUntil };
    }
  }

  async markDelivered(id: string, at: string, status: number | null, response: string | null): Promise<void> {
    await this.db
      .updateTable('notification_deliveries')
      .set({
        status: 'delivered',
        delivered_at: at,
        next_attempt_at: null,
        lease_until: null,
        response_status: status,
        response,
        error: null,
      })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .execute();
  }

  /** Records a failed attempt: retried at `nextAttemptAt`, or failed for good when that is null. */
  async markAttemptFailed(
    id: string,
    outcome: { status: number | null; response: string | null; error: string },
    nextAttemptAt: string | null,
  ): Promise<void> {
    await this.db
      .updateTable('notification_deliveries')
      .set({
        status: nextAttemptAt === null ? 'failed' : 'pending',
        next_attempt_at: nextAttemptAt,
        lease_until: null,
        response_status: outcome.status,
        response: outcome.response,
        error: outcome.error,
      })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .execute();
  }

  /** Deliveries of the target created since `since` and sent on their own (not held for a digest). */
  async countSentSince(targetId: string, since: string): Promise<number> {
    const row = await this.db
      .selectFrom('notification_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('target_id', '=', targetId)
      .where('created_at', '>=', since)
      .where('hold_until', 'is', null)
      .where('status', '!=', 'folded')
      .where('event', '!=', 'test')
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** The end of the target's current holding window, if deliveries are held. */
  async heldUntil(targetId: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('notification_deliveries')
      .select((eb) => eb.fn.min('hold_until').as('until'))
      .where('target_id', '=', targetId)
      .where('status', '=', 'pending')
      .where('hold_until', 'is not', null)
      .executeTakeFirst();
    return (row?.until as string | null | undefined) ?? undefined;
  }

  /** Held deliveries whose window ended, by target, oldest first. */
  async heldDue(now: string): Promise<DeliveryRow[]> {
    return this.db
      .selectFrom('notification_deliveries')
      .selectAll()
      .where('status', '=', 'pending')
      .where('hold_until', '<=', now)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  /** The earliest time something is due: an attempt, a lease running out, or a held window ending. */
  async nextDue(): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('notification_deliveries')
      .select((eb) => [eb.fn.min('next_attempt_at').as('attempt'), eb.fn.min('hold_until').as('hold')])
      .where('status', '=', 'pending')
      .executeTakeFirst();
    const times = [row?.attempt, row?.hold].filter((t): t is string => typeof t === 'string');
    return times.sort()[0];
  }

  /** Folds held deliveries into `digest` in one transaction: the digest exists iff they are folded. */
  async fold(digest: DeliveryRow, held: readonly string[]): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await tx.insertInto('notification_deliveries').values(digest).execute();
      await tx
        .updateTable('notification_deliveries')
        .set({ status: 'folded', digest_id: digest.id, next_attempt_at: null, hold_until: null })
        .where('id', 'in', [...held])
        .where('status', '=', 'pending')
        .execute();
    });
  }

  async delivery(id: string): Promise<DeliveryRow | undefined> {
    return this.db.selectFrom('notification_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async deliveries(filter: DeliveryFilter): Promise<DeliveryRow[]> {
    let query = this.db.selectFrom('notification_deliveries').selectAll();
    if (filter.targetId !== undefined) query = query.where('target_id', '=', filter.targetId);
    if (filter.status !== undefined) query = query.where('status', '=', filter.status);
    return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute();
  }
}

function toTarget(row: {
  id: string;
  source: string;
  settings: string;
  created_at: string;
  updated_at: string;
}): Target {
  return {
    id: row.id,
    source: row.source === 'config' ? 'config' : 'api',
    settings: JSON.parse(row.settings) as TargetSettings,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
