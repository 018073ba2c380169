/** API key rows: the only module that reads or writes the api_keys table. */

import type { Kysely } from 'kysely';
import { changeStampReader } from '../jobs/change-stamp.js';
import type { JobDatabase } from '../jobs/database.js';
import { SharedStampRead } from '../jobs/shared-stamp-read.js';
import { KeyStamp } from './key-stamp.js';

export interface KeyRow {
  name: string;
  keyId: string;
  secretHash: string;
  scopes: string[];
  createdAt: string;
}

export class KeyStore {
  /** The keys' generation on PostgreSQL, one query shared by the checks that asked before it was sent. */
  private readonly generation: SharedStampRead<number>;

  constructor(private readonly db: Kysely<JobDatabase>) {
    const stamp = new KeyStamp(db);
    this.generation = new SharedStampRead(() => stamp.read());
  }

  /** Inserts a key; returns false when the name is taken (the primary key decides, so two racing creates cannot both win). */
  async insert(row: KeyRow): Promise<boolean> {
    const result = await this.db
      .insertInto('api_keys')
      .values({
        name: row.name,
        key_id: row.keyId,
        secret_hash: row.secretHash,
        scopes: row.scopes.join(','),
        created_at: row.createdAt,
      })
      .onConflict((conflict) => conflict.column('name').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  /**
   * The change stamp a cache of key lookups is kept under (jobs/change-stamp.ts): it moves with every
   * committed change of the database, this process's or another's, so with every revocation. Read
   * synchronously when it can be; undefined when the database has no stamp (then nothing is cached).
   */
  changeStampNow(): string | undefined {
    return changeStampReader(this.db)?.now();
  }

  /**
   * The stamp when it cannot be read synchronously (PostgreSQL; SQLite inside a transaction): the keys'
   * own generation, which triggers move in every transaction that writes a key, on any instance
   * (key-stamp.ts). Narrower than the database's stamp, so heartbeats and job writes keep the cache.
   */
  async readChangeStamp(): Promise<string> {
    return `api_keys:${await this.generation.read()}`;
  }

  /** The key's row as committed now (the key cache, key-cache.ts, keeps the result under the stamp). */
  async byKeyId(keyId: string): Promise<KeyRow | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('key_id', '=', keyId)
      .executeTakeFirst();
    return row && toRow(row);
  }

  async byName(name: string): Promise<KeyRow | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('name', '=', name).executeTakeFirst();
    return row && toRow(row);
  }

  async list(): Promise<KeyRow[]> {
    const rows = await this.db.selectFrom('api_keys').selectAll().orderBy('name').execute();
    return rows.map(toRow);
  }

  /** Deletes the key with this id (an app key approved but never fetched); false when there was none. */
  async deleteByKeyId(keyId: string): Promise<boolean> {
    const result = await this.db.deleteFrom('api_keys').where('key_id', '=', keyId).executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  /** Deletes the key; false when there was none by that name. */
  async delete(name: string): Promise<boolean> {
    const result = await this.db.deleteFrom('api_keys').where('name', '=', name).executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }
}

function toRow(row: {
  name: string;
  key_id: string;
  secret_hash: string;
  scopes: string;
  created_at: string;
}): KeyRow {
  return {
    name: row.name,
    keyId: row.key_id,
    secretHash: row.secret_hash,
    scopes: row.scopes.split(',').filter(Boolean),
    createdAt: row.created_at,
  };
}
