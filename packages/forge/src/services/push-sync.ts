import type { Kysely } from 'kysely';
import {
  commitsBetween,
  countCommits,
  hasNoBranches,
  listBranches,
  resolveCommit,
  setHeadBranch,
  ZERO_SHA,
} from '../git/repository.js';
import { forgetDeletedTags } from '../store/releases.js';
import { updateRepository } from '../store/repositories.js';
import type { Database, RepositoryRow, UserRow } from '../store/schema.js';
import { syncTagRecord } from './release-sync.js';
import { pushCommitsContent, type RepoAction, RepoActionType, tagPushContent } from './repo-activity.js';

/** How one ref moved in a push. */
export interface RefChange {
  ref: string;
  oldSha: string;
  newSha: string;
}

/** Refs that differ between two snapshots (`listRefs` before and after a push). */
export function diffRefs(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
): RefChange[] {
  const changes: RefChange[] = [];
  for (const [ref, newSha] of after) {
    const oldSha = before.get(ref) ?? ZERO_SHA;
    if (oldSha !== newSha) changes.push({ ref, oldSha, newSha });
  }
  for (const [ref, oldSha] of before) if (!after.has(ref)) changes.push({ ref, oldSha, newSha: ZERO_SHA });
  return changes;
}

/** Everything a post-push synchronisation needs. */
export interface PushContext {
  db: Kysely<Database>;
  gitDir: string;
  repo: RepositoryRow;
  owner: UserRow;
  pusher: UserRow;
  now: () => number;
}

const TAG_PREFIX = 'refs/tags/';
const BRANCH_PREFIX = 'refs/heads/';

/**
 * Brings the database in line with a push: tag records for new and deleted tags, the empty flag and the
 * default branch, each written so that doing it again changes nothing. Answers the push_tag / delete_tag
 * / commit_repo activity of the pusher, which is not like that: the caller records it in the transaction
 * that records the push's webhook events and ends its journal row (webhooks/ref-journal.ts), so a push
 * announced again after a failure or a crash has its activity once.
 */
export async function syncAfterPush(ctx: PushContext, changes: readonly RefChange[]): Promise<RepoAction[]> {
  const actions: RepoAction[] = [];
  if (changes.length === 0) return actions;
  const deletedTags: string[] = [];
  const repoPath = `${ctx.owner.name}/${ctx.repo.name}`;
  for (const change of changes) {
    if (change.ref.startsWith(TAG_PREFIX)) {
      const name = change.ref.slice(TAG_PREFIX.length);
      if (change.newSha === ZERO_SHA) {
        deletedTags.push(name.toLowerCase());
        actions.push({
          opType: RepoActionType.DeleteTag,
          actor: ctx.pusher,
          repo: ctx.repo,
          owner: ctx.owner,
          refName: change.ref,
          content: '',
          createdUnix: ctx.now(),
        });
        continue;
      }
      await syncTagRecord(ctx, name, ctx.pusher.id);
      const commitSha = await resolveCommit(ctx.gitDir, change.newSha);
      const head = commitSha ? await commitsBetween(ctx.gitDir, ZERO_SHA, commitSha, 1) : [];
      actions.push({
        opType: RepoActionType.PushTag,
        actor: ctx.pusher,
        repo: ctx.repo,
        owner: ctx.owner,
        refName: change.ref,
        content: tagPushContent(head[0]),
        createdUnix: ctx.now(),
      });
    } else if (change.ref.startsWith(BRANCH_PREFIX)) {
      const branch = change.ref.slice(BRANCH_PREFIX.length);
      if (change.newSha === ZERO_SHA) {
        actions.push({
          opType: RepoActionType.DeleteBranch,
          actor: ctx.pusher,
          repo: ctx.repo,
          owner: ctx.owner,
          refName: branch,
          content: '',
          createdUnix: ctx.now(),
        });
        continue;
      }
      const commits = await commitsBetween(ctx.gitDir, change.oldSha, change.newSha, 5);
      const total = await countCommits(
        ctx.gitDir,
        change.oldSha === ZERO_SHA ? change.newSha : `${change.oldSha}..${change.newSha}`,
      );
      const compareUrl =
        change.oldSha === ZERO_SHA ? '' : `${repoPath}/compare/${change.oldSha}...${change.newSha}`;
      actions.push({
        opType: RepoActionType.CommitRepo,
        actor: ctx.pusher,
        repo: ctx.repo,
        owner: ctx.owner,
        refName: change.ref,
        content: pushCommitsContent(commits, total, compareUrl),
        createdUnix: ctx.now(),
      });
    }
  }
  await forgetDeletedTags(ctx.db, ctx.repo.id, deletedTags);
  await syncEmptyAndDefaultBranch(ctx);
  return actions;
}

/**
 * Updates the empty flag; when the default branch does not exist but others do (first push of another
 * branch), the first branch becomes the default, as Gitea does.
 */
async function syncEmptyAndDefaultBranch(ctx: PushContext): Promise<void> {
  const isEmpty = await hasNoBranches(ctx.gitDir);
  let defaultBranch = ctx.repo.default_branch;
  if (!isEmpty && !(await resolveCommit(ctx.gitDir, `refs/heads/${defaultBranch}`))) {
    const branches = await listBranches(ctx.gitDir);
    if (branches[0]) {
      defaultBranch = branches[0].name;
      await setHeadBranch(ctx.gitDir, defaultBranch);
    }
  }
  if (isEmpty !== (ctx.repo.is_empty === 1) || defaultBranch !== ctx.repo.default_branch) {
    await updateRepository(ctx.db, ctx.repo.id, { isEmpty, defaultBranch }, ctx.now());
  }
}
