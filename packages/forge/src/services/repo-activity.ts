import type { Kysely } from 'kysely';
import type { GitCommitSummary } from '../git/repository.js';
import { insertActions } from '../store/actions.js';
import { repositoryWatchers } from '../store/repo-access.js';
import { type Database, type RepositoryRow, type UserRow, UserType } from '../store/schema.js';
import { getRepoPermission, UnitType } from './permissions.js';

/** Gitea's ActionType numbers for the repository events the forge records. */
export const RepoActionType = {
  CreateRepo: 1,
  CommitRepo: 5,
  PushTag: 9,
  DeleteTag: 16,
  DeleteBranch: 17,
  PublishRelease: 24,
} as const;

/** Gitea shows at most this many commits of a push in a feed entry (setting.UI.FeedMaxCommitNum). */
const FEED_MAX_COMMITS = 5;

/** One repository event before fan-out. */
export interface RepoAction {
  opType: number;
  actor: UserRow;
  repo: RepositoryRow;
  owner: UserRow;
  refName: string;
  content: string;
  createdUnix: number;
}

/**
 * Records an event the way Gitea's NotifyWatchers does: a row for the actor, one for the owning
 * organisation (unless it is the actor), and one per watcher other than the actor who can read the code.
 */
export async function recordRepoAction(db: Kysely<Database>, action: RepoAction): Promise<void> {
  const isOrganization = action.owner.type === UserType.Organization;
  const receivers = new Set<number>([action.actor.id]);
  if (isOrganization && action.owner.id !== action.actor.id) receivers.add(action.owner.id);
  const watchers = await repositoryWatchers(
    db,
    { id: action.repo.id, ownerId: action.repo.owner_id },
    isOrganization,
  );
  for (const watcher of watchers) {
    if (receivers.has(watcher.id)) continue;
    const permission = await getRepoPermission(db, action.repo, action.owner, watcher);
    if (permission.canRead(UnitType.Code)) receivers.add(watcher.id);
  }
  await insertActions(
    db,
    [...receivers].map((userId) => ({
      user_id: userId,
      op_type: action.opType,
      act_user_id: action.actor.id,
      repo_id: action.repo.id,
      ref_name: action.refName,
      is_private: action.repo.is_private,
      content: action.content,
      created_unix: action.createdUnix,
    })),
  );
}

function pushCommit(commit: GitCommitSummary) {
  return {
    Sha1: commit.sha,
    Message: commit.message,
    AuthorEmail: commit.authorEmail,
    AuthorName: commit.authorName,
    CommitterEmail: commit.committerEmail,
    CommitterName: commit.committerName,
    Timestamp: commit.timestamp,
  };
}

/** The JSON Gitea stores as the content of commit_repo rows (repository.PushCommits), newest first. */
export function pushCommitsContent(
  commits: readonly GitCommitSummary[],
  total: number,
  compareUrl: string,
): string {
  return JSON.stringify({
    Commits: commits.slice(0, FEED_MAX_COMMITS).map(pushCommit),
    HeadCommit: commits[0] ? pushCommit(commits[0]) : null,
    CompareURL: compareUrl,
    Len: total,
  });
}

/** The content of push_tag rows: no commit list, only the tagged commit as head. */
export function tagPushContent(head: GitCommitSummary | undefined): string {
  return JSON.stringify({ Commits: [], HeadCommit: head ? pushCommit(head) : null, CompareURL: '', Len: 0 });
}
