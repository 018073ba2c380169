import type { Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { ForgeConfig } from '../config.js';
import type { Database } from '../store/schema.js';
import { SeenKeys } from './seen-keys.js';
import { type StampSource, stampSource } from './stamp.js';

/** A kept GET answer: its JSON bytes and the headers its handler set (list totals and links). */
export interface KeptAnswer {
  headers: [string, string][];
  body: Buffer;
}

const ANSWER_CACHE_BYTES = 32 * 1024 * 1024;
/** Roughly what an entry costs besides its key and body (map slots, entry object, header pairs). */
const ENTRY_OVERHEAD_BYTES = 128;

const MAX_KEPT_LOOKUPS = 10_000;

/** A kept value and the epoch it was kept in: it is found only while that epoch is current. */
interface Kept<V> {
  epoch: number;
  value: V;
}

/**
 * The epochs of one request's stamp (store/change-stamp.ts): `all` moves with any change and tags kept
 * answers; `accounts` moves with changes to users, tokens and tokens' repositories only and tags kept
 * token and user lookups, which a write elsewhere (a release, a repository) then leaves in place.
 */
export interface Epochs {
  all: number;
  accounts: number;
}

/** Numbers the distinct values a stamp takes, in the order they are seen: the current one is the epoch. */
class EpochCounter {
  private stamp: string | undefined;
  current = 0;

  enter(stamp: string): number {
    if (stamp !== this.stamp) {
      this.stamp = stamp;
      this.current += 1;
    }
    return this.current;
  }
}

/**
 * One database handle's (and config's) kept reads and the stamps they were read under. Every change of a
 * stamp starts a new epoch of that grain; an entry is kept only by a request whose stamp is still the
 * current epoch's, and found only by one whose stamp is. Entries of past epochs are never found again (a
 * stamp never comes back) and make room as the LRU evicts them. The caches themselves live as long as
 * the handle: starting each epoch with new ones cost ~5 % of the CPU of a workload with a write every few
 * milliseconds (the LRUs allocate their `max` slots up front; profile in the issue-35 closing note).
 */
export class StampedCaches {
  private readonly all = new EpochCounter();
  private readonly accounts = new EpochCounter();
  // Keys count against the budget too: they hold the request's URL, up to the HTTP parser's header
  // limit, so small answers under long URLs (`?x=<16 kB>`) cannot exceed the budget many times over.
  private readonly answers = new LRUCache<string, Kept<KeptAnswer>>({
    maxSize: ANSWER_CACHE_BYTES,
    maxEntrySize: ANSWER_CACHE_BYTES / 4,
    sizeCalculation: ({ value }, key) =>
      value.body.length + 64 * value.headers.length + key.length + ENTRY_OVERHEAD_BYTES,
  });
  private readonly tokens = new LRUCache<string, Kept<object>>({ max: MAX_KEPT_LOOKUPS });
  private readonly users = new LRUCache<string, Kept<object>>({ max: MAX_KEPT_LOOKUPS });
  private readonly seen = new SeenKeys();

  constructor(private readonly source: StampSource) {}

  /** The epochs of the stamp read now: synchronously when it can be (SQLite), else one round trip. */
  async currentEpochs(): Promise<Epochs | null> {
    const stamp = this.source.now() ?? (await this.source.read());
    if (stamp === undefined) return null;
    return { all: this.all.enter(stamp.all), accounts: this.accounts.enter(stamp.accounts) };
  }

  answer(key: string, epoch: number): KeptAnswer | undefined {
    return found(this.answers.get(key), epoch, this.all.current);
  }

  /** Whether an entry missed under `key` is worth keeping: the key missed before in this epoch (cache/seen-keys.ts). */
  seenBefore(key: string, epoch: number): boolean {
    return this.seen.seenBefore(key, epoch);
  }

  keepAnswer(key: string, epoch: number, answer: KeptAnswer): void {
    if (epoch === this.all.current) this.answers.set(key, { epoch, value: answer });
  }

  /** A kept token or user lookup, found only in the account epoch it was kept in. */
  lookup<T extends object>(kind: 'tokens' | 'users', key: string, epoch: number): T | undefined {
    return found(this[kind].get(key), epoch, this.accounts.current) as T | undefined;
  }

  keepLookup<T extends object>(kind: 'tokens' | 'users', key: string, epoch: number, value: T): void {
    if (epoch === this.accounts.current) this[kind].set(key, { epoch, value });
  }
}

/** A kept entry's value when it was kept in the asking request's epoch and that epoch is still current. */
function found<V>(kept: Kept<V> | undefined, asking: number, current: number): V | undefined {
  return kept !== undefined && kept.epoch === asking && asking === current ? kept.value : undefined;
}

// Per database handle (each forge, and each test forge, has its own), then per config: an answer depends
// on the config (links) and the stamp is only meaningful for the connection it was read on.
const cachesByDb = new WeakMap<Kysely<Database>, WeakMap<ForgeConfig, StampedCaches>>();

/** The caches of a handle and config; null when caching is off or the handle has no change stamp. */
export function stampedCaches(db: Kysely<Database>, config: ForgeConfig): StampedCaches | null {
  if (!config.cache.enabled) return null;
  const source = stampSource(db);
  if (!source) return null;
  let byConfig = cachesByDb.get(db);
  if (!byConfig) {
    byConfig = new WeakMap();
    cachesByDb.set(db, byConfig);
  }
  let caches = byConfig.get(config);
  if (!caches) {
    caches = new StampedCaches(source);
    byConfig.set(config, caches);
  }
  return caches;
}
