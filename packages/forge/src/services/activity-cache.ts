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

/** Roughly what an entry costs besides its key and body (map slot, entry object, tag). */
const ENTRY_OVERHEAD_BYTES = 128;

interface Entry<V> {
  tag: string;
  body: V;
  size: number;
}

/**
 * Least recently used entries go first once the kept keys and bodies exceed `maxBytes`. A body is a Buffer, or
 * anything else `sizeOf` tells the size of (e.g. a body with its headers).
 */
export class AnswerCache<V = Buffer> {
  private readonly entries = new Map<string, Entry<V>>();
  private bytes = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly sizeOf: (body: V) => number = (body) => (body as Buffer).length,
  ) {}

  /** The body kept for `key` when it was built under `tag`. */
  get(key: string, tag: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry || entry.tag !== tag) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.body;
  }

  /** Whether anything is kept for `key`, whatever its tag. */
  has(key: string): boolean {
    return this.entries.has(key);
  }

  set(key: string, tag: string, body: V): void {
    this.delete(key);
    // Keys count too: they hold the request's URL, up to the HTTP parser's header limit, so small
    // answers under long URLs (`?x=<16 kB>`) must not let the kept bytes exceed the budget many times.
    const size = this.sizeOf(body) + key.length + ENTRY_OVERHEAD_BYTES;
    if (size > this.maxBytes / 4) return;
    this.entries.set(key, { tag, body, size });
    this.bytes += size;
    for (const [oldest] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.delete(oldest);
    }
  }

  /** Drops every entry. */
  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  private delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.size;
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
