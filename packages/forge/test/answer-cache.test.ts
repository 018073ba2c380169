// The kept-answer caches (src/services/activity-cache.ts AnswerCache, used for heatmaps, kept GET answers
// and replays) are bounded in bytes. Their keys hold request URLs, which a client chooses, so the bound
// must count the keys as well as the bodies.
import { describe, expect, it } from 'vitest';
import { AnswerCache } from '../src/services/activity-cache.js';

describe('kept answers bounded in bytes', () => {
  it('counts long keys against the budget, dropping the least recently used entries', () => {
    const cache = new AnswerCache(64 * 1024);
    const body = Buffer.from('{}');
    const keys = Array.from(
      { length: 16 },
      (_, i) => `/api/v1/users/u?x=${String(i).padStart(2, '0')}${'a'.repeat(16_000)}`,
    );
    for (const key of keys) cache.set(key, 'epoch-1', body);
    // 16 entries of ~16 kB keys cannot all fit in 64 kB: only the last four are kept.
    expect(keys.map((key) => cache.has(key))).toEqual([...Array(12).fill(false), true, true, true, true]);
    expect(cache.get(keys[15]!, 'epoch-1')).toBe(body);
  });

  it('keeps many entries with short keys within the same budget', () => {
    const cache = new AnswerCache(64 * 1024);
    const body = Buffer.from('{}');
    const keys = Array.from({ length: 200 }, (_, i) => `/api/v1/users/u${i}`);
    for (const key of keys) cache.set(key, 'epoch-1', body);
    expect(keys.every((key) => cache.get(key, 'epoch-1') === body)).toBe(true);
  });
});
