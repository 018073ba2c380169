/**
 * forge's response caches and the one invariant that makes them safe.
 *
 * INVARIANT: a request's freshness stamp is read once, first — before anything its answer depends on
 * is read (the caller, the credential, the rows) — and every kept read the request finds or keeps is
 * tagged with that one stamp. A request that writes neither finds nor keeps anything from then on.
 *
 * api/app.ts opens each request's ReadView in its first onRequest hook, ahead of the auth chain, so no
 * code downstream can read the stamp late: the token cache (services/tokens.ts) and the kept answers
 * (cache/kept-answers.ts) only ever see the view's stamp. Why that suffices: an entry found under stamp S
 * was built from rows read after S was read, and the database still shows S, so nothing it was built
 * from changed since; an answer built while a write commits is kept under the stamp from before the
 * write, which the next request no longer reads. The one cache with its own stamp, the heatmap
 * (cache/heatmap-cache.ts), reads its activity generations before its rows and keys entries by the
 * viewer fields it depends on: the same rule at a finer grain.
 *
 * The stamp (store/change-stamp.ts): on SQLite `data_version` with this connection's `total_changes()`,
 * read synchronously outside transactions (a commit by any process, or any row this connection
 * changed, moves it); on PostgreSQL the server's current snapshot, one round trip that concurrent
 * requests share (cache/shared-stamp-read.ts), each trusting only a query sent after it asked. Equal
 * stamps mean no commit in between; a stamp never comes back once it moved. Read with it (in its statement on
 * PostgreSQL): the account generation (migration 016), which triggers move with every change to users,
 * tokens and tokens' repositories. Token and user lookups are tagged with that finer part of the same
 * stamp — read first like the rest — so writes to other tables leave them in place.
 *
 * The switch: `[cache] enabled = false` in the config file, or FORGE_CACHE=off (config.ts), turns every
 * response cache off: each request then gets NO_READ_CACHE and every answer is built from the rows.
 *
 * Only answers derived purely from database rows (and the process's fixed config) may be kept: nothing
 * read from the clock or from git. Callers key entries by everything else the answer depends on.
 */
import { hash } from 'node:crypto';
import type { ServiceContext } from '../services/context.js';
import { type Epochs, type KeptAnswer, type StampedCaches, stampedCaches } from './stamped-caches.js';

export type { KeptAnswer } from './stamped-caches.js';

/** One request's use of the caches, under the stamp read when it was opened. */
export class ReadView {
  private caches: StampedCaches | null;

  constructor(
    caches: StampedCaches | null,
    private readonly epochs: Epochs = { all: 0, accounts: 0 },
  ) {
    this.caches = caches;
  }

  /** Whether this request may still find and keep reads. */
  get enabled(): boolean {
    return this.caches !== null;
  }

  /** This request wrote: what it read before may not hold after, so nothing is found or kept from now on. */
  wrote(): void {
    this.caches = null;
  }

  /**
   * The answer kept for `key` under this request's stamp, and — when there is none and the key missed
   * before (cache/seen-keys.ts) — a function that keeps the one built now.
   */
  answer(key: string): { hit: KeptAnswer | undefined; keep: ((answer: KeptAnswer) => void) | null } {
    const caches = this.caches;
    if (!caches) return { hit: undefined, keep: null };
    const epoch = this.epochs.all;
    const hit = caches.answer(key, epoch);
    if (hit || !caches.seenBefore(key, epoch)) return { hit, keep: null };
    return {
      hit,
      // Checked again when keeping: a write in between would make the answer span two states.
      keep: (answer) => {
        if (this.caches) caches.keepAnswer(key, epoch, answer);
      },
    };
  }

  /**
   * A token lookup's hit kept under this request's account stamp, and a function that keeps the one found
   * now. Only hits are kept: a token created later is never answered by a kept miss. Entries are keyed by
   * a hash of the token, so no token text stays in memory.
   */
  token<T extends object>(token: string): { hit: T | undefined; keep: (hit: T) => void } {
    if (!this.caches) return NOTHING_KEPT;
    return this.accountLookup<T>('tokens', hash('sha256', token, 'base64'));
  }

  /** The user row named `lowerName` kept under this request's account stamp; the same rules as for tokens. */
  user<T extends object>(lowerName: string): { hit: T | undefined; keep: (row: T) => void } {
    if (!this.caches) return NOTHING_KEPT;
    return this.accountLookup<T>('users', lowerName);
  }

  /**
   * A lookup kept under the account stamp. Kept on its first miss, unlike answers (no doorkeeper): keeping
   * stores a reference to rows read anyway, with nothing copied, and an account epoch outlives every write
   * to other tables, so a lookup kept now is found by the next request with the same credential or name.
   */
  private accountLookup<T extends object>(
    kind: 'tokens' | 'users',
    key: string,
  ): { hit: T | undefined; keep: (value: T) => void } {
    const caches = this.caches!;
    const epoch = this.epochs.accounts;
    const hit = caches.lookup<T>(kind, key, epoch);
    if (hit) return { hit, keep: keepNothing };
    return {
      hit,
      keep: (value) => {
        if (this.caches) caches.keepLookup(kind, key, epoch, value);
      },
    };
  }
}

function keepNothing(): void {}
const NOTHING_KEPT = { hit: undefined, keep: keepNothing };

/** A view that finds and keeps nothing: caches off, a request that writes, callers outside a request. */
export const NO_READ_CACHE = new ReadView(null);

/** What openReadView needs to know of a request: whether anything in it could find or keep a read. */
export interface ReadViewRequest {
  method: string;
  /** The route keeps answers (cache/kept-answers.ts marks it in its config). */
  keepsAnswers: boolean;
  /** The request carries a credential that may be an access token (header or query): a token lookup. */
  mayPresentToken: boolean;
}

/**
 * Opens a request's view, reading its stamp now. Call it first, before the request reads anything else
 * (api/app.ts does, ahead of authentication). Only GET and HEAD requests find or keep anything: a request
 * that writes could not keep what it read anyway. And only a request that could use a cache reads the
 * stamp — a route that keeps answers, or a credential that may be a token: any other request (`/version`,
 * an anonymous page) would find and keep nothing, so on PostgreSQL it saves a round trip. A cache used
 * outside these two cases would get NO_READ_CACHE there: no kept read, never a stale one.
 */
export async function openReadView(ctx: ServiceContext, request: ReadViewRequest): Promise<ReadView> {
  if (request.method !== 'GET' && request.method !== 'HEAD') return NO_READ_CACHE;
  if (!request.keepsAnswers && !request.mayPresentToken) return NO_READ_CACHE;
  const caches = stampedCaches(ctx.db, ctx.config);
  if (!caches) return NO_READ_CACHE;
  const epochs = await caches.currentEpochs();
  return epochs ? new ReadView(caches, epochs) : NO_READ_CACHE;
}
