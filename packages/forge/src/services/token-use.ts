/**
 * When each access token was last used (Gitea's `updated_unix`, shown as `last_used_at`). Uses are noted
 * in memory and written together, at most once a minute per process, instead of by the request that used
 * the token: every write moves the change stamp and so retires every kept answer (cache/read-view.ts), and
 * with many distinct tokens in use (10 000 users each with a token of their own) a write per token and
 * minute meant a new epoch every few milliseconds, which made the caches cost more than they saved.
 *
 * Pending uses are written before anything shows them (the token list), when the app closes, and when the
 * oldest has waited `USE_FLUSH_MS`. A process killed with -9 loses at most that minute of "last used"
 * times, never a token.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';
import { recordTokenUses } from '../store/tokens.js';
import type { ServiceContext } from './context.js';

/** A used token's time is written when it is at least this old. */
export const TOKEN_USE_SECONDS = 60;
const USE_FLUSH_MS = TOKEN_USE_SECONDS * 1000;

class TokenUses {
  /** Token id → the latest second it was used, not written yet. */
  private pending = new Map<number, number>();
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly db: Kysely<Database>) {}

  note(tokenId: number, now: number): void {
    this.pending.set(tokenId, now);
    if (this.timer) return;
    this.timer = setTimeout(() => void this.flush(), USE_FLUSH_MS);
    // A quiet process may exit with uses pending; app close writes them.
    this.timer.unref();
  }

  /** Writes the pending uses (after any write already under way, so times never go backwards). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const uses = this.pending;
    if (uses.size === 0) return this.writing;
    this.pending = new Map();
    // A failed write (database briefly gone) loses those times only: it must not stop every later flush,
    // nor fail the token lists that wait for one.
    this.writing = this.writing.then(() => recordTokenUses(this.db, uses)).catch(() => undefined);
    return this.writing;
  }
}

const usesByDb = new WeakMap<Kysely<Database>, TokenUses>();

function usesOf(ctx: ServiceContext): TokenUses {
  let uses = usesByDb.get(ctx.db);
  if (!uses) {
    uses = new TokenUses(ctx.db);
    usesByDb.set(ctx.db, uses);
  }
  return uses;
}

/** Notes that a token whose stored last use is `lastUsed` was used now; written later (see above). */
export function noteTokenUse(ctx: ServiceContext, tokenId: number, lastUsed: number, now: number): void {
  if (now - lastUsed >= TOKEN_USE_SECONDS) usesOf(ctx).note(tokenId, now);
}

/** Writes every pending use of this process: before showing last uses, and when the app closes. */
export function flushTokenUses(ctx: ServiceContext): Promise<void> {
  return usesByDb.get(ctx.db)?.flush() ?? Promise.resolve();
}
