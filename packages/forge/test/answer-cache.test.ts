// The kept-body caches (src/cache/heatmap-cache.ts TaggedBodies; the kept answers use the same lru-cache
// settings in src/cache/stamped-caches.ts) are bounded in bytes. Their keys may hold what a client
// chose, so the bound counts the keys as well as the bodies.
import { describe, expect, it } from 'vitest';
import { TaggedBodies } from '../src/cache/heatmap-cache.js';

describe('kept bodies bounded in bytes', () => {
  it('counts long keys against the budget, dropping the least recently used entries', () => {
    const cache = new TaggedBodies(64 * 1024);
    const body = Buffer.from('{}');
    const keys = Array.from(
      { length: 16 },
      (_, i) => `/api/v1/users/u?x=${String(i).padStart(2, '0')}${'a'.repeat(16_000)}`,
    );
    for (const key of keys) cache.set(key, 'epoch-1', body);
    // 16 entries of ~16 kB keys cannot all fit in 64 kB: only the last three or four are kept.
    const kept = keys.map((key) => cache.get(key, 'epoch-1') === body);
    expect(kept.slice(0, 12)).toEqual(Array(12).fill(false));
    expect(kept[15]).toBe(true);
  });

  it('keeps many entries with short keys within the same budget, each only under its tag', () => {
    const cache = new TaggedBodies(64 * 1024);
    const body = Buffer.from('{}');
    const keys = Array.from({ length: 200 }, (_, i) => `/api/v1/users/u${i}`);
    for (const key of keys) cache.set(key, 'epoch-1', body);
    expect(keys.every((key) => cache.get(key, 'epoch-1') === body)).toBe(true);
    expect(cache.get(keys[0]!, 'epoch-2')).toBeUndefined();
  });
});
