/**
 * The git side of publishing a release: the tag it names (made when missing, as Gitea's createTag), the
 * tag's `create`/`push` webhook events and activity, and the tag-only record kept when the release's own
 * database step fails. Used by ./releases.ts.
 */

import type { Transaction } from 'kysely';
import { Invalid, NotFound } from '../errors.js';
import {
  commitsBetween,
  countCommits,
  createTag,
  getTag,
  InvalidRefNameError,
  resolveCommit,
  TagExistsError,
  ZERO_SHA,
} from '../git/repository.js';
import type { Database, UserRow } from '../store/schema.js';
import { raiseHookEvents } from '../webhooks/outbox.js';
import type { HookEventRecord } from '../webhooks/payloads.js';
import { preparePushEvents } from '../webhooks/push-events.js';
import { journalRefWrite, type RefWrite } from '../webhooks/ref-journal.js';
import { nowUnix } from './context.js';
import { canControlTag } from './protected-tags.js';
import { syncTagRecord } from './release-sync.js';
import { RepoActionType, recordRepoAction, tagPushContent } from './repo-activity.js';
import type { RepoContext } from './repo-context.js';

/** The git side of a non-draft release: the tag exists afterwards and `created` tells if we made it. */
export interface TagOutcome {
  commitSha: string;
  numCommits: number;
  created: boolean;
  /**
   * The journal of a tag this request created (webhooks/ref-journal.ts): closed in the transaction that
   * records the tag's events with the release; if that never commits, the repair announces the tag.
   */
  journal?: RefWrite;
}

/**
 * Gitea's createTag: an existing tag is used as is; a missing one is checked against tag protection for
 * the publisher (422), its target resolved (404) and then created atomically.
 */
export async function ensureTag(
  ctx: RepoContext,
  publisher: UserRow,
  tagName: string,
  target: string,
  message: string,
): Promise<TagOutcome> {
  const existing = await getTag(ctx.gitDir, tagName);
  if (existing) {
    return {
      commitSha: existing.commitSha,
      numCommits: await countCommits(ctx.gitDir, existing.commitSha),
      created: false,
    };
  }
  if (!(await canControlTag(ctx, tagName, publisher.id))) {
    throw new Invalid(`release tag name is protected [tag_name: ${tagName}]`);
  }
  const commitSha = await resolveCommit(ctx.gitDir, target);
  if (!commitSha) throw new NotFound(`target "${target}" not found: object does not exist [id: ${target}]`);
  const ref = `refs/tags/${tagName}`;
  const source = { ctx, gitDir: ctx.gitDir, repo: ctx.repo, owner: ctx.owner, pusher: publisher };
  const journal = await journalRefWrite(source, new Map([[ref, ZERO_SHA]]), false);
  try {
    await createTag(ctx.gitDir, {
      name: tagName,
      commitSha,
      message,
      tagger: { name: publisher.name, email: publisher.email },
    });
  } catch (error) {
    // No tag of ours: nothing to announce.
    await journal.discard();
    if (error instanceof InvalidRefNameError)
      throw new Invalid(`tag name "${tagName}" is not a valid git tag name`);
    if (!(error instanceof TagExistsError)) throw error;
    // Pushed at the same moment by someone else: the tag exists, which is all a release needs.
    const raced = await getTag(ctx.gitDir, tagName);
    if (!raced) throw error;
    return {
      commitSha: raced.commitSha,
      numCommits: await countCommits(ctx.gitDir, raced.commitSha),
      created: false,
    };
  }
  try {
    return { commitSha, numCommits: await countCommits(ctx.gitDir, commitSha), created: true, journal };
  } catch (error) {
    journal.release();
    throw error;
  }
}

/**
 * Records the `create` and `push` events of a tag this request created in `trx` (the release's
 * transaction), closing its journal; nothing when the repair announced the tag already.
 */
export async function raiseTagEvents(
  trx: Transaction<Database>,
  tag: TagOutcome | null,
  events: readonly HookEventRecord[],
): Promise<void> {
  if (!tag?.journal) return;
  if (await tag.journal.closeIn(trx)) await raiseHookEvents(trx, events);
}

/** The `create` and `push` webhook events of a tag this request created (Gitea's createTag notifies both). */
export async function tagHookEvents(
  ctx: RepoContext,
  publisher: UserRow,
  tagName: string,
  tag: TagOutcome | null,
) {
  if (!tag?.created) return [];
  return preparePushEvents({ ctx, gitDir: ctx.gitDir, repo: ctx.repo, owner: ctx.owner, pusher: publisher }, [
    { ref: `refs/tags/${tagName}`, oldSha: ZERO_SHA, newSha: tag.commitSha },
  ]);
}

/** Records push_tag for a tag the forge created and publish_release for a release that became public. */
export async function recordPublication(
  ctx: RepoContext,
  publisher: UserRow,
  release: { tagName: string; title: string },
  tag: TagOutcome | null,
): Promise<void> {
  const now = nowUnix();
  if (tag?.created) {
    const [head] = await commitsBetween(ctx.gitDir, ZERO_SHA, tag.commitSha, 1);
    await recordRepoAction(ctx.db, {
      opType: RepoActionType.PushTag,
      actor: publisher,
      repo: ctx.repo,
      owner: ctx.owner,
      refName: `refs/tags/${release.tagName}`,
      content: tagPushContent(head),
      createdUnix: now,
    });
  }
  await recordRepoAction(ctx.db, {
    opType: RepoActionType.PublishRelease,
    actor: publisher,
    repo: ctx.repo,
    owner: ctx.owner,
    refName: release.tagName,
    content: release.title,
    createdUnix: now,
  });
}

/**
 * Records a tag this request made when the database step after it failed (a concurrent rename took the
 * name): the tag may already be relied on, so it is kept and gets its tag-only record, as a sync would.
 */
export async function recordTagOnly(ctx: RepoContext, tagName: string): Promise<void> {
  await syncTagRecord({ db: ctx.db, gitDir: ctx.gitDir, repo: ctx.repo, owner: ctx.owner }, tagName);
}
