/**
 * The Gitea-format payloads of the events the forge raises (modules/structs/hook.go), built from rows
 * and git facts the caller gathered. Pure: the same inputs give the same JSON, so tests and the test
 * delivery use exactly what real events send. Repositories are rendered with owner access, as Gitea's
 * notifier does (`convert.ToRepo(…, AccessModeOwner)`), users with no viewer (private e-mails hidden).
 */
import type { ForgeConfig } from '../config.js';
import { toOrganization } from '../convert/org.js';
import { toRelease } from '../convert/release.js';
import { repoHtmlUrl, toRepository } from '../convert/repository.js';
import { toUser } from '../convert/user.js';
import type { GitCommitSummary } from '../git/repository.js';
import { RepoPermission } from '../services/repo-permission.js';
import { AccessMode, type ReleaseRow, type RepositoryRow, type UserRow, UserType } from '../store/schema.js';
import type {
  CreatePayload,
  DeletePayload,
  PayloadCommit,
  PushPayload,
  ReleasePayload,
  RepositoryPayload,
} from '../structs/hook.js';
import type { Attachment } from '../structs/release.js';
import type { Repository } from '../structs/repo.js';
import type { RaisedEvent } from './events.js';

const OWNER_ACCESS = new RepoPermission(AccessMode.Owner, null);

/** The repository an event happened in, with what its rendering needs. */
export interface EventRepository {
  repo: RepositoryRow;
  owner: UserRow;
  releaseCount: number;
}

/** One event ready for the outbox: its Gitea payload and what hook selection reads. */
export interface HookEventRecord {
  event: RaisedEvent;
  action: string;
  repoId: number;
  ownerId: number;
  /** Full ref name for the branch filter (push, create, delete); null for events it does not apply to. */
  ref: string | null;
  payload: object;
}

function payloadRepository(config: ForgeConfig, source: EventRepository): Repository {
  return toRepository(config, source.repo, source.owner, null, OWNER_ACCESS, {
    releases: source.releaseCount,
  });
}

/** A commit as push payloads list it, with its files. */
export function toPayloadCommit(
  config: ForgeConfig,
  source: EventRepository,
  commit: GitCommitSummary,
  files: { added: string[]; removed: string[]; modified: string[] },
  usernames: ReadonlyMap<string, string> = new Map(),
): PayloadCommit {
  return {
    id: commit.sha,
    message: commit.message,
    url: `${repoHtmlUrl(config, source.owner, source.repo)}/commit/${commit.sha}`,
    author: {
      name: commit.authorName,
      email: commit.authorEmail,
      username: usernames.get(commit.authorEmail.toLowerCase()) ?? '',
    },
    committer: {
      name: commit.committerName,
      email: commit.committerEmail,
      username: usernames.get(commit.committerEmail.toLowerCase()) ?? '',
    },
    verification: null,
    timestamp: commit.timestamp,
    added: files.added,
    removed: files.removed,
    modified: files.modified,
  };
}

/** Gitea's PushPayload; `commits` newest first as Gitea lists them, head_commit the newest. */
export function pushEvent(
  config: ForgeConfig,
  source: EventRepository,
  pusher: UserRow,
  push: {
    ref: string;
    before: string;
    after: string;
    compareUrl: string;
    commits: PayloadCommit[];
    total: number;
  },
): HookEventRecord {
  const payload: PushPayload = {
    ref: push.ref,
    before: push.before,
    after: push.after,
    compare_url: push.compareUrl,
    commits: push.commits,
    total_commits: push.total,
    head_commit: push.commits[0] ?? null,
    repository: payloadRepository(config, source),
    pusher: toUser(config, pusher, null),
    sender: toUser(config, pusher, null),
  };
  return record('push', '', source, push.ref, payload);
}

/** Gitea's CreatePayload: `ref` is the short name, `ref_type` branch or tag. */
export function createEvent(
  config: ForgeConfig,
  source: EventRepository,
  sender: UserRow,
  ref: { fullName: string; sha: string },
): HookEventRecord {
  const { short, type } = refParts(ref.fullName);
  const payload: CreatePayload = {
    sha: ref.sha,
    ref: short,
    ref_type: type,
    repository: payloadRepository(config, source),
    sender: toUser(config, sender, null),
  };
  return record('create', '', source, ref.fullName, payload);
}

/** Gitea's DeletePayload (`pusher_type` is always `user`). */
export function deleteEvent(
  config: ForgeConfig,
  source: EventRepository,
  sender: UserRow,
  fullName: string,
): HookEventRecord {
  const { short, type } = refParts(fullName);
  const payload: DeletePayload = {
    ref: short,
    ref_type: type,
    pusher_type: 'user',
    repository: payloadRepository(config, source),
    sender: toUser(config, sender, null),
  };
  return record('delete', '', source, fullName, payload);
}

/** Gitea's ReleasePayload for `published`, `updated` and `deleted`. */
export function releaseEvent(
  config: ForgeConfig,
  source: EventRepository,
  sender: UserRow,
  action: 'published' | 'updated' | 'deleted',
  release: { row: ReleaseRow; publisher: UserRow; assets: Attachment[] },
): HookEventRecord {
  const payload: ReleasePayload = {
    action,
    release: toRelease(
      config,
      source.owner,
      source.repo,
      release.row,
      toUser(config, release.publisher, null),
      release.assets,
    ),
    repository: payloadRepository(config, source),
    sender: toUser(config, sender, null),
  };
  return record('release', action, source, null, payload);
}

/** Gitea's RepositoryPayload; `organization` is the owning organization, null for a user's repository. */
export function repositoryEvent(
  config: ForgeConfig,
  source: EventRepository,
  sender: UserRow,
  action: 'created' | 'deleted',
): HookEventRecord {
  const payload: RepositoryPayload = {
    action,
    repository: payloadRepository(config, source),
    organization: source.owner.type === UserType.Organization ? toOrganization(config, source.owner) : null,
    sender: toUser(config, sender, null),
  };
  return record('repository', action, source, null, payload);
}

function record(
  event: RaisedEvent,
  action: string,
  source: EventRepository,
  ref: string | null,
  payload: object,
): HookEventRecord {
  return { event, action, repoId: source.repo.id, ownerId: source.owner.id, ref, payload };
}

/** `refs/heads/x` → branch x, `refs/tags/x` → tag x. */
export function refParts(fullName: string): { short: string; type: 'branch' | 'tag' } {
  if (fullName.startsWith('refs/tags/')) return { short: fullName.slice('refs/tags/'.length), type: 'tag' };
  return { short: fullName.replace(/^refs\/heads\//, ''), type: 'branch' };
}
