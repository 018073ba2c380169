/**
 * Durable webhook events of git writes (ARCHITECTURE.md principle 11). A git write cannot share a
 * transaction with the database, so it is journalled: before git changes any ref, a row records the
 * repository, the pusher and the refs as they were (store/ref-journal.ts). Afterwards one transaction
 * records the push's activity and its push / create / delete deliveries and deletes the row. A crash in between leaves the row;
 * once its lease lapses, any process repairs it (`repairRefJournal`, run by the delivery worker at
 * start-up and periodically): the ref changes are derived again from the saved refs and git's current
 * ones and announced as the live path would have. Deleting the row is the claim, so they are recorded once.
 *
 * Known limit: a push to the same repository that another process serves between a crash and its repair
 * is announced by its own journal and again by the repair (a duplicate, never a loss).
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { Transaction } from 'kysely';
import { listRefs, ZERO_SHA } from '../git/repository.js';
import { nowUnix, type ServiceContext } from '../services/context.js';
import { diffRefs, type RefChange, syncAfterPush } from '../services/push-sync.js';
import { recordRepoAction } from '../services/repo-activity.js';
import { serialiseRepoWrite } from '../services/repo-write-queue.js';
import { gitDirOf } from '../services/repos.js';
import {
  deleteRefJournal,
  insertRefJournal,
  lapsedRefJournals,
  renewRefJournal,
  takeOverRefJournal,
} from '../store/ref-journal.js';
import { findRepositoryById } from '../store/repositories.js';
import type { Database, RefJournalRow } from '../store/schema.js';
import { findUserById } from '../store/users.js';
import { raiseHookEvents, wakeDeliveryWorkers } from './outbox.js';
import { type PushSource, preparePushEvents } from './push-events.js';

/** A journalled ref write in progress. */
export interface RefWrite {
  /**
   * Announces the write's ref changes as a push by the pusher: activity, the empty flag and default
   * branch (services/push-sync.ts), then the webhook events and the row's deletion in one transaction.
   * False when the row had been taken over (the repair announced the write).
   */
  announce(changes: readonly RefChange[]): Promise<boolean>;
  /** Stops renewing the lease (idempotent); an unannounced row stays for the repair. */
  release(): void;
  /** Forgets the row: the write failed and changed no ref. */
  discard(): Promise<void>;
  /**
   * Deletes the row in the caller's transaction, which records the write's events itself (a release and
   * the tag it created). False when the row had been taken over: the repair recorded them already.
   */
  closeIn(trx: Transaction<Database>): Promise<boolean>;
}

/**
 * Journals a ref write before it happens. `refsBefore` holds every ref (`whole`, a git push, whose
 * changes are whatever differs afterwards) or just the refs the write may change (a contents-API commit).
 */
export async function journalRefWrite(
  source: PushSource,
  refsBefore: ReadonlyMap<string, string>,
  whole: boolean,
): Promise<RefWrite> {
  const { db, config } = source.ctx;
  const leaseMs = config.webhook.pushLeaseMs;
  const claim = randomUUID();
  const id = await insertRefJournal(db, {
    repo_id: source.repo.id,
    pusher_id: source.pusher.id,
    refs_before: JSON.stringify(Object.fromEntries(refsBefore)),
    whole_snapshot: whole ? 1 : 0,
    claim,
    lease_until_ms: Date.now() + leaseMs,
    created_unix: nowUnix(),
  });
  // A push may outlast the lease (a large pack): the holder renews it while it runs.
  const renewal = setInterval(() => {
    renewRefJournal(db, id, claim, Date.now() + leaseMs).catch(() => undefined);
  }, leaseMs / 3);
  renewal.unref();
  const release = () => clearInterval(renewal);
  return {
    async announce(changes) {
      try {
        return await announceRefChanges(source, changes, id, claim);
      } finally {
        release();
      }
    },
    release,
    async discard() {
      release();
      await deleteRefJournal(db, id, claim);
    },
    async closeIn(trx) {
      release();
      return deleteRefJournal(trx, id, claim);
    },
  };
}

async function announceRefChanges(
  source: PushSource,
  changes: readonly RefChange[],
  id: number,
  claim: string,
): Promise<boolean> {
  const { ctx } = source;
  const { gitDir, repo, owner, pusher } = source;
  // Tag records, the empty flag and the default branch: done again by a repair, they change nothing.
  const actions = await syncAfterPush({ db: ctx.db, gitDir, repo, owner, pusher, now: nowUnix }, changes);
  const events = await preparePushEvents(source, changes);
  // The activity and the events are recorded by whoever ends the row, in one transaction: once.
  const recorded = await ctx.db.transaction().execute(async (trx) => {
    if (!(await deleteRefJournal(trx, id, claim))) return false;
    for (const action of actions) await recordRepoAction(trx, action);
    await raiseHookEvents(trx, events);
    return true;
  });
  if (recorded && events.length > 0) wakeDeliveryWorkers();
  return recorded;
}

/** The changes of a journalled write, from the refs it saved and the refs git has now. */
export function journalledChanges(row: RefJournalRow, after: ReadonlyMap<string, string>): RefChange[] {
  const saved: unknown = JSON.parse(row.refs_before);
  const before = new Map<string, string>();
  if (saved && typeof saved === 'object') {
    for (const [ref, sha] of Object.entries(saved)) if (typeof sha === 'string') before.set(ref, sha);
  }
  if (row.whole_snapshot === 1) return diffRefs(before, after);
  const changes: RefChange[] = [];
  for (const [ref, oldSha] of before) {
    const newSha = after.get(ref) ?? ZERO_SHA;
    if (newSha !== oldSha) changes.push({ ref, oldSha, newSha });
  }
  return changes;
}

/** Journal rows looked at per repair pass. */
const REPAIR_BATCH = 20;

/**
 * Announces the writes whose holder's lease lapsed (a crash between the git write and its events).
 * Returns how many journalled writes were repaired.
 */
export async function repairRefJournal(ctx: ServiceContext): Promise<number> {
  const leaseMs = ctx.config.webhook.pushLeaseMs;
  let repaired = 0;
  const nowMs = Date.now();
  for (const row of await lapsedRefJournals(ctx.db, nowMs, REPAIR_BATCH)) {
    const claim = randomUUID();
    if (!(await takeOverRefJournal(ctx.db, row, claim, nowMs, Date.now() + leaseMs))) continue;
    const repo = await findRepositoryById(ctx.db, row.repo_id);
    const owner = repo ? await findUserById(ctx.db, repo.owner_id) : undefined;
    if (!repo || !owner || !existsSync(gitDirOf(ctx, owner, repo))) {
      // The repository is gone: so are the hooks its events would have reached.
      await deleteRefJournal(ctx.db, row.id, claim);
      continue;
    }
    const source: PushSource = {
      ctx,
      gitDir: gitDirOf(ctx, owner, repo),
      repo,
      owner,
      // A pusher deleted since is replaced by the owner, as the events need someone to name.
      pusher: (await findUserById(ctx.db, row.pusher_id)) ?? owner,
    };
    // Within this process, writes to the repository wait, so its refs are the journalled write's alone.
    const announced = await serialiseRepoWrite(repo.id, async () =>
      announceRefChanges(source, journalledChanges(row, await listRefs(source.gitDir)), row.id, claim),
    );
    if (announced) repaired += 1;
  }
  return repaired;
}
