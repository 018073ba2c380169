import type { ForgeConfig } from '../config.js';
import type { GitCommit, GitCommitStats, GitFileChange, GitPerson, GitRef } from '../git/commits.js';
import type { RepositoryRow, UserRow } from '../store/schema.js';
import type { Commit, CommitMeta, CommitUser, CommitVerification, Reference } from '../structs/commit.js';
import { pathEscapeSegments, repoApiUrl, repoHtmlUrl } from './repository.js';
import { GO_ZERO_TIME } from './time.js';
import { toUser } from './user.js';

/**
 * A git strict ISO date as Go formats a `time.Time` in RFC 3339: the commit's own offset is kept, but a
 * zero offset is written `Z`.
 */
export function gitDateAsGo(date: string): string {
  return date.replace(/[+-]00:00$/, 'Z');
}

/** The same instant in UTC (Gitea writes file-commit dates with `.UTC()`). */
export function gitDateAsUtc(date: string): string {
  const ms = Date.parse(date);
  return Number.isNaN(ms) ? date : `${new Date(ms).toISOString().slice(0, -5)}Z`;
}

/** Gitea's verification of an unsigned commit: the forge signs nothing and verifies nothing. */
export const UNSIGNED_VERIFICATION: CommitVerification = {
  verified: false,
  reason: 'gpg.error.not_signed_commit',
  signature: '',
  signer: null,
  payload: '',
};

/** `<api>/git/commits/<sha>`. */
export function commitApiUrl(config: ForgeConfig, owner: UserRow, repo: RepositoryRow, sha: string): string {
  return `${repoApiUrl(config, owner, repo)}/git/commits/${encodeURIComponent(sha)}`;
}

/** `<api>/git/trees/<sha>`. */
export function treeApiUrl(config: ForgeConfig, owner: UserRow, repo: RepositoryRow, sha: string): string {
  return `${repoApiUrl(config, owner, repo)}/git/trees/${encodeURIComponent(sha)}`;
}

/** `CommitUser` with the date as `format` writes it. */
export function toCommitUser(person: GitPerson, format: (date: string) => string): CommitUser {
  return { name: person.name, email: person.email, date: format(person.date) };
}

/** What one commit's answer includes (Gitea's ToCommitOptions; every part defaults to on). */
export interface CommitParts {
  stat: boolean;
  verification: boolean;
  files: boolean;
}

/** Everything `toCommit` renders, gathered by the commits service. */
export interface CommitDetails {
  commit: GitCommit;
  /** Forge users whose e-mail matches the author and committer, if any. */
  authorUser: UserRow | null;
  committerUser: UserRow | null;
  files: GitFileChange[] | null;
  stats: GitCommitStats | null;
}

/** Gitea's `convert.ToCommit`; users are rendered as anonymous viewers see them, as Gitea does. */
export function toCommit(
  config: ForgeConfig,
  owner: UserRow,
  repo: RepositoryRow,
  details: CommitDetails,
  parts: CommitParts,
): Commit {
  const { commit } = details;
  const url = commitApiUrl(config, owner, repo, commit.sha);
  const created = gitDateAsGo(commit.committer.date);
  const parents: CommitMeta[] = commit.parents.map((sha) => ({
    url: commitApiUrl(config, owner, repo, sha),
    sha,
    created: GO_ZERO_TIME,
  }));
  return {
    url,
    sha: commit.sha,
    created,
    html_url: `${repoHtmlUrl(config, owner, repo)}/commit/${encodeURIComponent(commit.sha)}`,
    commit: {
      url,
      author: toCommitUser(commit.author, gitDateAsGo),
      committer: toCommitUser(commit.committer, gitDateAsGo),
      message: commit.message,
      tree: { url: treeApiUrl(config, owner, repo, commit.treeSha), sha: commit.treeSha, created },
      verification: parts.verification ? UNSIGNED_VERIFICATION : null,
    },
    author: details.authorUser ? toUser(config, details.authorUser, null) : null,
    committer: details.committerUser ? toUser(config, details.committerUser, null) : null,
    parents,
    files: details.files,
    stats: details.stats
      ? {
          total: details.stats.additions + details.stats.deletions,
          additions: details.stats.additions,
          deletions: details.stats.deletions,
        }
      : null,
  };
}

/** Gitea's `Reference` for one ref. */
export function toReference(
  config: ForgeConfig,
  owner: UserRow,
  repo: RepositoryRow,
  ref: GitRef,
): Reference {
  const api = repoApiUrl(config, owner, repo);
  return {
    ref: ref.name,
    url: `${api}/git/${pathEscapeSegments(ref.name)}`,
    object: {
      type: ref.objectType,
      sha: ref.objectSha,
      url: `${api}/git/${encodeURIComponent(ref.objectType)}s/${encodeURIComponent(ref.objectSha)}`,
    },
  };
}
