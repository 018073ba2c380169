import type { Kysely } from 'kysely';
import {
  type ChangeStamp,
  hasChangeStamp,
  isRoundTripChangeStamp,
  readChangeStamp,
  readChangeStampNow,
} from '../store/change-stamp.js';
import type { Database } from '../store/schema.js';
import { SharedStampRead } from './shared-stamp-read.js';

/** How a database handle's change stamp (store/change-stamp.ts) is read for the caches. */
export interface StampSource {
  /** The stamp read synchronously (SQLite outside a transaction); undefined when it cannot be. */
  now(): ChangeStamp | undefined;
  /** The stamp, read by a statement sent after this call (PostgreSQL: a shared round trip). */
  read(): Promise<ChangeStamp | undefined>;
}

const sources = new WeakMap<Kysely<Database>, StampSource>();

/** The stamp source of a handle opened by openDatabase; null for any other handle. */
export function stampSource(db: Kysely<Database>): StampSource | null {
  if (!hasChangeStamp(db)) return null;
  let source = sources.get(db);
  if (!source) {
    // PostgreSQL: concurrent readers share round trips, each trusting only a query sent after it asked.
    const shared = isRoundTripChangeStamp(db) ? new SharedStampRead(async () => readChangeStamp(db)) : null;
    source = {
      now: () => readChangeStampNow(db),
      read: shared ? () => shared.read() : () => readChangeStamp(db),
    };
    sources.set(db, source);
  }
  return source;
}
