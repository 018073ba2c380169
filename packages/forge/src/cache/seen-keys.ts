/**
 * The kept answers' doorkeeper. Most keys of a varied workload (an answer per URL and caller: 10 000 users
 * each reading other users' profiles) are asked for once, and keeping such an answer — copying it into the
 * LRU, evicting another for it, collecting both later — cost more than the rare hit repaid: 25–30 % more
 * CPU per request than caches off on the varied token lookup (bench/cache-cpu.ts). So an answer is kept
 * only when its key misses a second time: this table remembers a 32-bit hash of each key that missed, one
 * per slot, 65 536 slots (256 KiB). Only admission depends on it: a collision can admit an answer early or
 * skip one, never serve one (a kept answer is still found by its full key, under the request's stamp).
 */
const SLOTS = 1 << 16;

export class SeenKeys {
  private readonly slots = new Uint32Array(SLOTS);

  /** Whether `key` was seen before (then the answer is worth keeping); remembers it either way. */
  seenBefore(key: string): boolean {
    const hash = fnv1a(key);
    const slot = (hash ^ (hash >>> 16)) & (SLOTS - 1);
    if (this.slots[slot] === hash) return true;
    this.slots[slot] = hash;
    return false;
  }
}

/** 32-bit FNV-1a of the string's UTF-16 code units; 0 maps to 1 so that an empty slot never matches. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0 || 1;
}
