/** Rows of `app_key_requests`: the only module that reads or writes that table. */

import type { Kysely, Selectable } from 'kysely';
import type { JobDatabase } from '../jobs/database.js';
import type { AppKeyRequestsTable } from './tables.js';

export type AppKeyRequestRow = Selectable<AppKeyRequestsTable>;

export class AppKeyRequestStore {
  constructor(private readonly db: Kysely<JobDatabase>) {}

  async insert(row: AppKeyRequestRow): Promise<void> {
    await this.db.insertInto('app_key_requests').values(row).execute();
  }

  async byId(id: string): Promise<AppKeyRequestRow | undefined> {
    return this.db.selectFrom('app_key_requests').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async byPollHash(pollHash: string): Promise<AppKeyRequestRow | undefined> {
    return this.db
      .selectFrom('app_key_requests')
      .selectAll()
      .where('poll_hash', '=', pollHash)
      .executeTakeFirst();
  }

  async countPending(now: string): Promise<number> {
    const row = await this.db
      .selectFrom('app_key_requests')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('status', '=', 'pending')
      .where('expires_at', '>', now)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  async pending(now: string): Promise<AppKeyRequestRow[]> {
    return this.db
      .selectFrom('app_key_requests')
      .selectAll()
      .where('status', '=', 'pending')
      .where('expires_at', '>', now)
      .orderBy('created_at')
      .execute();
  }

  /** Moves a pending, unexpired request to `status`; false when it was no longer pending (a race lost). */
  async decide(
    id: string,
    status: 'approved' | 'denied',
    keyName: string | null,
    now: string,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('app_key_requests')
      .set({ status, key_name: keyName })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Deletes the request; false when another poll already took it. */
  async delete(id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('app_key_requests').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  /** Requests past their expiry, to be removed (with the key of an approved one nobody fetched). */
  async expired(now: string): Promise<AppKeyRequestRow[]> {
    return this.db.selectFrom('app_key_requests').selectAll().where('expires_at', '<=', now).execute();
  }
}
