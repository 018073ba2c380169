/**
 * The change stamp of the API keys: a generation that database triggers move with every write to
 * `api_keys`, in the writing transaction, whatever wrote it (this instance, another instance of the farm
 * on the same PostgreSQL database, `machine-api keys`). See farm/tables.ts.
 *
 * The contract for any cache of keys (the rule of forge's cache/read-view.ts): read the stamp once, first,
 * before reading any key; keep what was read under that stamp; use a kept entry only while the stamp read
 * at the start of a later request is still the same. A revocation committed before a request began has
 * moved the stamp, so no instance answers that request from a key read before it.
 */

import type { Kysely } from 'kysely';
import type { JobDatabase } from '../jobs/database.js';

export class KeyStamp {
  constructor(private readonly db: Kysely<JobDatabase>) {}

  /** The current generation of `api_keys` (one primary-key read). */
  async read(): Promise<number> {
    const row = await this.db
      .selectFrom('change_stamps')
      .select('generation')
      .where('name', '=', 'api_keys')
      .executeTakeFirstOrThrow();
    return Number(row.generation);
  }
}
