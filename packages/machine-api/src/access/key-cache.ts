/**
 * Presented keys already authenticated, kept under the database's change stamp (jobs/change-stamp.ts) so
 * that a key check costs a hash and a map lookup instead of a query, as forge's token check does.
 *
 * Correct by construction (ARCHITECTURE.md, the cache invariant): a request reads the stamp first, before
 * the key's row; an answer is kept under the stamp read before it was looked up, and found only by a
 * request whose own stamp is that same value. A revocation, a new key or any other committed change moves
 * the stamp, so the very next request starts a new epoch with an empty cache. Entries are keyed by the
 * SHA-256 of the presented text: the cache never holds a key, only what a hash of it stands for.
 */

import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Actor } from './scopes.js';

/** Distinct keys kept per epoch; a farm has a handful, the bound is against a flood of made-up keys. */
const MAX_KEPT = 10_000;

/** What a presented key stood for: the actor, or `null` for a key that is unknown, revoked or malformed. */
type Kept = { actor: Actor | null };

export class KeyCache {
  private stamp: string | undefined;
  private entries = new LRUCache<string, Kept>({ max: MAX_KEPT });

  /** The digest a presented key is kept under. */
  static digest(presented: string): string {
    return createHash('sha256').update(presented, 'utf8').digest('base64');
  }

  /** What the key stood for under `stamp`, or undefined when nothing is kept for that stamp. */
  get(digest: string, stamp: string): Kept | undefined {
    this.enter(stamp);
    return this.entries.get(digest);
  }

  /** Keeps what the key stood for, if `stamp` (read before the lookup) is still the current epoch's. */
  keep(digest: string, stamp: string, actor: Actor | null): void {
    if (stamp === this.stamp) this.entries.set(digest, { actor });
  }

  /** A request saw `stamp`: a different one than the epoch's starts a new, empty epoch. */
  private enter(stamp: string): void {
    if (stamp === this.stamp) return;
    this.stamp = stamp;
    this.entries = new LRUCache<string, Kept>({ max: MAX_KEPT });
  }
}
