/**
 * Heatmap answers kept as their JSON bytes. A year of a busy user's heatmap is ~20 000 buckets: summing
 * them and writing 860 kB of JSON takes tens of milliseconds, while the answer changes only when the
 * user receives an action, when who may see whose activity changes, or every 15 minutes as the
 * window moves. Each entry carries the activity generations (migration 012, bumped by database triggers
 * in the writing transaction, whatever process writes) read before it was built and the window's first
 * whole bucket; a request reads the current generations first (one primary-key lookup) and uses an
 * entry only when both match, so no entry outlives a new action or a visibility change.
 */
import type { Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { ForgeConfig } from '../config.js';
import type { Database } from '../store/schema.js';

/** Roughly what an entry costs besides its key and body (map slots, entry object, tag). */
const ENTRY_OVERHEAD_BYTES = 128;
const HEATMAP_CACHE_BYTES = 32 * 1024 * 1024;

/** Bodies kept with the tag (generations and window) they were built under. */
export class TaggedBodies {
  private readonly entries: LRUCache<string, { tag: string; body: Buffer }>;

  constructor(maxBytes = HEATMAP_CACHE_BYTES) {
    // Keys count too: a client chooses them (URLs), so long keys must not exceed the budget many times.
    this.entries = new LRUCache({
      maxSize: maxBytes,
      maxEntrySize: maxBytes / 4,
      sizeCalculation: (entry, key) => entry.body.length + key.length + ENTRY_OVERHEAD_BYTES,
    });
  }

  /** The body kept for `key` when it was built under `tag`. */
  get(key: string, tag: string): Buffer | undefined {
    const entry = this.entries.get(key);
    return entry?.tag === tag ? entry.body : undefined;
  }

  set(key: string, tag: string, body: Buffer): void {
    this.entries.set(key, { tag, body });
  }
}

/** Keeps nothing: the heatmap with caching switched off. */
const NO_BODIES = { get: () => undefined, set: () => {} } satisfies Pick<TaggedBodies, 'get' | 'set'>;

/** Heatmap bodies kept per database handle (each forge, and each test forge, has its own). */
const heatmapCaches = new WeakMap<Kysely<Database>, TaggedBodies>();

export function heatmapCache(db: Kysely<Database>, config: ForgeConfig): Pick<TaggedBodies, 'get' | 'set'> {
  if (!config.cache.enabled) return NO_BODIES;
  let cache = heatmapCaches.get(db);
  if (!cache) {
    cache = new TaggedBodies();
    heatmapCaches.set(db, cache);
  }
  return cache;
}
