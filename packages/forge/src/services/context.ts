import type { Kysely } from 'kysely';
import type { ForgeConfig } from '../config.js';
import type { DialectName } from '../store/dialect.js';
import type { Database } from '../store/schema.js';

/** What every service function needs: the database, its dialect and the parsed config. */
export interface ServiceContext {
  db: Kysely<Database>;
  dialect: DialectName;
  config: ForgeConfig;
}

/** Current time in unix seconds (the unit every `*_unix` column uses). */
export function nowUnix(): number {
  return Math.floor(Date.now() / 1000);
}
