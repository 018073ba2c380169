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
import type { Database } from '../store/schema.js';

interface Entry {
  tag: string;
  body: Buffer;
}

/** Least recently used entries go first once the kept bodies exceed `maxBytes`. */
export class AnswerCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** The body kept for `key` when it was built under `tag`. */
  get(key: string, tag: string): Buffer | undefined {
    const entry = this.entries.get(key);
    if (!entry || entry.tag !== tag) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.body;
  }

  set(key: string, tag: string, body: Buffer): void {
    this.delete(key);
    if (body.length > this.maxBytes / 4) return;
    this.entries.set(key, { tag, body });
    this.bytes += body.length;
    for (const [oldest] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.delete(oldest);
    }
  }

  private delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.body.length;
  }
}

/** Heatmap bodies kept per database handle (each forge, and each test forge, has its own). */
const HEATMAP_CACHE_BYTES = 32 * 1024 * 1024;
const heatmapCaches = new WeakMap<Kysely<Database>, AnswerCache>();

export function heatmapCache(db: Kysely<Database>): AnswerCache {
  let cache = heatmapCaches.get(db);
  if (!cache) {
    cache = new AnswerCache(HEATMAP_CACHE_BYTES);
    heatmapCaches.set(db, cache);
  }
  return cache;
}
