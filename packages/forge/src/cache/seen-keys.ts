/**
 * The kept answers' doorkeeper. Most keys of a varied workload (an answer per URL and caller: 10 000 users
 * each reading other users' profiles) are asked for once, and keeping such an answer — copying it into the
 * LRU, evicting another for it, collecting both later — cost more than the rare hit repaid: 25–30 % more
 * CPU per request than caches off on the varied token lookup (bench/cache-cpu.ts). So an entry is kept
 * only when its key misses a second time IN THE SAME EPOCH: under frequent writes (the varied workload's
 * 5 %, a new epoch every ~20 requests) an entry kept in one epoch is never found in the next, so keeping
 * it is pure cost. This table remembers a 32-bit hash of each key and epoch that missed, one per slot,
 * 65 536 slots (256 KiB). Only admission depends on it: a collision can admit an answer early or
 * skip one, never serve one (a kept answer is still found by its full key, under the request's stamp).
 * Token and user lookups pass no doorkeeper (cache/read-view.ts): their account epoch outlives writes
 * elsewhere, and keeping one copies nothing.
 */
const SLOTS = 1 << 16;

export class SeenKeys {
  private readonly slots = new Uint32Array(SLOTS);

  /** Whether `key` was seen before in `epoch` (then its entry is worth keeping); remembers it either way. */
  seenBefore(key: string, epoch: number): boolean {
    const hash = (fnv1a(key) ^ Math.imul(epoch, 0x9e3779b1)) >>> 0 || 1;
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
