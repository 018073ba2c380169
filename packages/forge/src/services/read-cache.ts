/**
 * A read cache for the hot API reads (token lookups and whole GET answers) that can never serve stale
 * data, because every use is validated against a stamp of the whole database read in one statement.
 *
 * SQLite (one connection per forge process, WAL, other processes such as `forge admin` may write): the
 * stamp is `PRAGMA data_version` together with `total_changes()`.
 * - data_version changes whenever another connection (any process) commits to the database file; it
 *   is unchanged by this connection's own commits.
 * - total_changes() counts every row this connection inserted, updated or deleted, including rows
 *   changed by triggers and foreign key actions (sqlite.org/c3ref/total_changes.html); forge's only
 *   other writes are its migrations, which run before it serves.
 * So two equal stamps mean no data changed in between. The stamp is read directly only while no
 * transaction is open on the connection (everything it reflects is committed); otherwise it is queued
 * behind Kysely's lock like any statement and read once the transaction ended. Either way it never
 * reflects, and no entry is built from, a change that could still roll back (store/change-stamp.ts).
 *
 * Every change of the stamp starts a new epoch and drops every entry. An entry is tagged with the epoch
 * its builder read *before* reading the rows it is built from: a write that lands between the two
 * moves the stamp, so that entry is never used (it may hold the newer data, but is not trusted). An
 * entry is used only when the stamp read at the start of the request is still its epoch's.
 *
 * PostgreSQL: the stamp is the server's current snapshot (`pg_current_snapshot()`), one round trip
 * instead of the request's own statements. Any commit changes it (store/change-stamp.ts), our writes
 * and other processes' alike; so does traffic in other databases of the same server, which costs hits,
 * never correctness. Statements after the stamp see at least what it covered, as on SQLite.
 *
 * Only answers derived purely from database rows (and the process's fixed config) may be kept: nothing
 * read from the clock or from git. Callers key entries by everything else the answer depends on.
 */
import { hash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { ForgeConfig } from '../config.js';
import {
  hasChangeStamp,
  hasDirectChangeStamp,
  readChangeStamp,
  readChangeStampNow,
} from '../store/change-stamp.js';
import type { Database } from '../store/schema.js';
import { AnswerCache } from './activity-cache.js';
import type { ServiceContext } from './context.js';

/** A kept GET answer: its JSON bytes and the headers its handler set (list totals and links). */
export interface KeptAnswer {
  headers: [string, string][];
  body: Buffer;
}

/**
 * A kept answer as it went out over HTTP (api/replay.ts): its head's header lines (flat name/value list)
 * but for the ones the HTTP server writes per response (Date, Connection, Keep-Alive), and its body.
 * Valid only under its epoch and, for a personal access token, until the token's next touch is due.
 */
export interface ReplayAnswer {
  headers: string[];
  body: Buffer;
  /** Unix seconds from which the request would touch its token (a write): replay no longer valid. */
  validBeforeUnix: number;
}

const ANSWER_CACHE_BYTES = 32 * 1024 * 1024;
const REPLAY_CACHE_BYTES = 32 * 1024 * 1024;
const MAX_KEPT_TOKENS = 10_000;

interface KeptToken<T> {
  epoch: number;
  hit: T;
}

/** One database handle's (and config's) kept reads and the stamp they were read under. */
class StampedCaches {
  private stamp: string | undefined;
  private epoch = 0;
  private readonly answers = new AnswerCache<KeptAnswer>(
    ANSWER_CACHE_BYTES,
    (answer) => answer.body.length + 64 * answer.headers.length,
  );
  private readonly tokens = new Map<string, KeptToken<unknown>>();
  // Bodies are the kept answers' own Buffers (shared), counted again here to bound the entry count.
  private readonly replays = new AnswerCache<ReplayAnswer>(
    REPLAY_CACHE_BYTES,
    (answer) => answer.body.length + 64 + 32 * answer.headers.length,
  );

  /** Whether the stamp is read synchronously (SQLite): the replay's lookup then returns no promise. */
  private readonly direct: boolean;

  constructor(private readonly db: Kysely<Database>) {
    this.direct = hasDirectChangeStamp(db);
  }

  /** Reads the stamp; a new one starts a new epoch and drops everything kept. */
  async currentEpoch(): Promise<number> {
    return this.enter(await readChangeStamp(this.db));
  }

  /**
   * The epoch of the stamp read synchronously (SQLite, no transaction open); undefined when it cannot be
   * read so (PostgreSQL, or inside a transaction).
   */
  epochNow(): number | undefined {
    const stamp = readChangeStampNow(this.db);
    return stamp === undefined ? undefined : this.enter(stamp);
  }

  private enter(stamp: string | undefined): number {
    if (stamp !== this.stamp) {
      this.stamp = stamp;
      this.epoch += 1;
      this.answers.clear();
      this.tokens.clear();
      this.replays.clear();
    }
    return this.epoch;
  }

  replay(key: string): ReplayAnswer | Promise<ReplayAnswer | undefined> | undefined {
    // Looked up before the stamp is read: most requests reaching here have nothing kept.
    if (!this.replays.has(key)) return undefined;
    // SQLite: synchronously, or (a transaction open) not at all, as the request then waits anyway.
    if (this.direct) {
      const epoch = this.epochNow();
      return epoch === undefined ? undefined : this.replays.get(key, String(epoch));
    }
    // PostgreSQL: the stamp's round trip, the same read a request's first kept read makes.
    return this.currentEpoch().then((epoch) => this.replays.get(key, String(epoch)));
  }

  keepReplay(key: string, epoch: number, answer: ReplayAnswer): void {
    if (epoch === this.epoch) this.replays.set(key, String(epoch), answer);
  }

  answer(key: string, epoch: number): KeptAnswer | undefined {
    return this.answers.get(key, String(epoch));
  }

  keepAnswer(key: string, epoch: number, answer: KeptAnswer): void {
    if (epoch === this.epoch) this.answers.set(key, String(epoch), answer);
  }

  token<T>(key: string, epoch: number): T | undefined {
    const kept = this.tokens.get(key);
    return kept && kept.epoch === epoch ? (kept.hit as T) : undefined;
  }

  keepToken<T>(key: string, epoch: number, hit: T): void {
    if (epoch !== this.epoch) return;
    this.tokens.delete(key);
    this.tokens.set(key, { epoch, hit });
    if (this.tokens.size > MAX_KEPT_TOKENS) this.tokens.delete(this.tokens.keys().next().value as string);
  }
}

// Per database handle (each forge, and each test forge, has its own), then per config: an answer depends
// on the config (links) and the stamp is only meaningful for the connection it was read on.
const cachesByDb = new WeakMap<Kysely<Database>, WeakMap<ForgeConfig, StampedCaches>>();

function cachesOf(ctx: ServiceContext): StampedCaches | null {
  if (!hasChangeStamp(ctx.db)) return null;
  let byConfig = cachesByDb.get(ctx.db);
  if (!byConfig) {
    byConfig = new WeakMap();
    cachesByDb.set(ctx.db, byConfig);
  }
  let caches = byConfig.get(ctx.config);
  if (!caches) {
    caches = new StampedCaches(ctx.db);
    byConfig.set(ctx.config, caches);
  }
  return caches;
}

/**
 * One request's use of the cache. Its stamp is read once, when the view is opened: before anything
 * else of the request is read (the caller, the credential, the rows), so everything it finds or keeps
 * is known to hold at that stamp. A request that writes (a token touch) stops finding and keeping
 * anything: what it read before its write may not hold after it, under any later stamp.
 */
export class ReadView {
  private caches: StampedCaches | null;

  constructor(
    caches: StampedCaches | null,
    private readonly epoch = 0,
  ) {
    this.caches = caches;
  }

  /** Whether reads may be kept at all (a handle opened by openDatabase, and no write yet). */
  get enabled(): boolean {
    return this.caches !== null;
  }

  /** This request wrote: nothing it read is found in or kept from here on. */
  wrote(): void {
    this.caches = null;
  }

  /** The answer kept for `key`, if it is still current; else a function that keeps the one built now. */
  answer(key: string): {
    hit?: KeptAnswer | undefined;
    keep: (answer: KeptAnswer) => void;
    /** Keeps the answer as sent for replay (api/replay.ts); absent when it may not be replayed. */
    replay?: ((replayKey: string, answer: ReplayAnswer) => void) | undefined;
  } {
    const caches = this.caches;
    if (!caches) return { keep: () => {} };
    const epoch = this.epoch;
    // The view is checked again when the answer is kept: a write in between (none today on GET
    // routes, but cheap to rule out) would make the answer span two states.
    const keep = (answer: KeptAnswer) => {
      if (this.caches) caches.keepAnswer(key, epoch, answer);
    };
    return {
      hit: caches.answer(key, epoch),
      keep,
      replay: (replayKey, answer) => {
        if (this.caches) caches.keepReplay(replayKey, epoch, answer);
      },
    };
  }

  /**
   * A token lookup's hit kept for this presented token, if still current; else a function that keeps
   * the one found now. Only hits are kept: a token created later is never answered by a kept miss.
   * Entries are keyed by a hash of the token, so no token text stays in memory.
   */
  token<T>(token: string): { hit: T | undefined; keep: (hit: T) => void } {
    const caches = this.caches;
    if (!caches) return { hit: undefined, keep: () => {} };
    const key = hash('sha256', token, 'base64');
    const epoch = this.epoch;
    return {
      hit: caches.token<T>(key, epoch),
      keep: (hit) => {
        if (this.caches) caches.keepToken(key, epoch, hit);
      },
    };
  }
}

/**
 * The replay layer's lookup: undefined when nothing is kept for the key (no stamp read), else the kept
 * answer if the stamp read now is still the epoch it was sent under (else undefined). On SQLite the
 * stamp is read synchronously (undefined inside a transaction); on PostgreSQL it is a round trip, so
 * the answer comes as a promise (rejected if the stamp cannot be read).
 */
export type ReplayLookup = (key: string) => ReplayAnswer | Promise<ReplayAnswer | undefined> | undefined;

/** The replay lookup of a handle (api/replay.ts); null when this handle keeps nothing. */
export function replayLookup(ctx: ServiceContext): ReplayLookup | null {
  const caches = cachesOf(ctx);
  if (!caches) return null;
  return (key) => caches.replay(key);
}

/**
 * A view of the read cache for one request, its stamp read now. Open it first, before the request
 * reads anything else (api/app.ts does, ahead of authentication). Only GET and HEAD requests keep
 * anything: a request that writes could not keep what it read anyway.
 */
export async function openReadView(ctx: ServiceContext, method: string): Promise<ReadView> {
  const caches = method === 'GET' || method === 'HEAD' ? cachesOf(ctx) : null;
  if (!caches) return NO_READ_CACHE;
  return new ReadView(caches, caches.epochNow() ?? (await caches.currentEpoch()));
}

/** A view that keeps and finds nothing (callers outside a request). */
export const NO_READ_CACHE = new ReadView(null);
