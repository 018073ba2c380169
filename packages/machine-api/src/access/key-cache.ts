/**
 * Presented keys already authenticated, kept under the database's change stamp (jobs/change-stamp.ts) so
 * that a key check costs a hash and a map lookup instead of a query, as forge's token check does.
 *
 * Correct by construction (ARCHITECTURE.md, the cache invariant): a request reads the stamp first, before
 * the key's row; an answer is kept under the stamp read before it was looked up, and found only by a
 * request whose own stamp is that same value. A revocation, a new key or any other committed change moves
 * the stamp, so the very next request finds nothing kept before it. Entries are keyed by the
 * SHA-256 of the presented text: the cache never holds a key, only what a hash of it stands for.
 */

import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Actor } from './scopes.js';

/** Distinct keys kept; a farm has a handful, the bound is against a flood of made-up keys. */
const MAX_KEPT = 10_000;

/** What a presented key stood for: the actor, or `null` for a key that is unknown, revoked or malformed. */
type Kept = { actor: Actor | null };

/**
 * One LRU for the life of the service, each entry tagged with the stamp it was kept under. (Starting an
 * empty LRU at each new stamp allocated its 10 000 slots again, and on SQLite the stamp moves with every
 * commit: each job or event write.) A stamp never comes back once it moved, so an entry whose stamp is
 * not the asking request's is never found again and makes room as the LRU evicts it.
 */
export class KeyCache {
  private readonly entries = new LRUCache<string, { stamp: string; kept: Kept }>({ max: MAX_KEPT });

  /** The digest a presented key is kept under. */
  static digest(presented: string): string {
    return createHash('sha256').update(presented, 'utf8').digest('base64');
  }

  /** What the key stood for when kept under `stamp`, or undefined when nothing is kept under it. */
  get(digest: string, stamp: string): Kept | undefined {
    const entry = this.entries.get(digest);
    return entry?.stamp === stamp ? entry.kept : undefined;
  }

  /** Keeps what the key stood for under `stamp`, the stamp read before it was looked up. */
  keep(digest: string, stamp: string, actor: Actor | null): void {
    this.entries.set(digest, { stamp, kept: { actor } });
  }
}
