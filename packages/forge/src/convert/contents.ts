import type { ForgeConfig } from '../config.js';
import type { GitCommit } from '../git/commits.js';
import { GitMode, type GitTreeEntry } from '../git/tree.js';
import type { RefCommit } from '../services/refs.js';
import type { RepositoryRow, UserRow } from '../store/schema.js';
import type { ContentsResponse, FileCommitResponse } from '../structs/contents.js';
import { commitApiUrl, gitDateAsGo, gitDateAsUtc, toCommitUser, treeApiUrl } from './commit.js';
import { pathEscapeSegments, repoApiUrl, repoHtmlUrl } from './repository.js';
import { GO_ZERO_TIME } from './time.js';

/** Go's `url.QueryEscape`. */
function queryEscape(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

/** Gitea's `RefName.RefWebLinkPath`: `branch/<name>`, `tag/<name>` or `commit/<sha>`. */
export function refWebLinkPath(ref: RefCommit): string {
  return `${ref.kind}/${pathEscapeSegments(ref.name)}`;
}

/** The kind the contents API reports for a tree entry. */
export function entryType(entry: GitTreeEntry): 'file' | 'dir' | 'symlink' | 'submodule' {
  if (entry.mode === GitMode.Tree) return 'dir';
  if (entry.mode === GitMode.Submodule) return 'submodule';
  if (entry.mode === GitMode.Symlink) return 'symlink';
  return 'file';
}

/** What one contents entry shows besides the tree entry itself, gathered by the contents service. */
export interface EntryExtras {
  /** Base64 of a file's bytes, null when not read (a listing, or larger than the API's blob limit). */
  contentBase64: string | null;
  /** A symlink's target. */
  target: string | null;
  submoduleUrl: string | null;
  /** The last commit that touched the path, when commit metadata is asked for. */
  lastCommit: GitCommit | null;
}

/** Gitea's ContentsResponse for one tree entry at `path`, read at `ref`. */
export function toContentsResponse(
  config: ForgeConfig,
  owner: UserRow,
  repo: RepositoryRow,
  ref: RefCommit,
  path: string,
  entry: GitTreeEntry,
  extras: EntryExtras,
): ContentsResponse {
  const api = repoApiUrl(config, owner, repo);
  const html = repoHtmlUrl(config, owner, repo);
  const type = entryType(entry);
  const self = `${api}/contents/${pathEscapeSegments(path)}?ref=${queryEscape(ref.inputRef)}`;
  const htmlUrl =
    type === 'submodule' ? null : `${html}/src/${refWebLinkPath(ref)}/${pathEscapeSegments(path)}`;
  const gitUrl = type === 'submodule' ? null : `${api}/git/blobs/${encodeURIComponent(entry.sha)}`;
  const downloadable = type === 'file' || type === 'symlink';
  const last = extras.lastCommit;
  return {
    name: entry.name,
    path,
    sha: entry.sha,
    ...(last
      ? {
          last_commit_sha: last.sha,
          last_committer_date: gitDateAsGo(last.committer.date),
          last_author_date: gitDateAsGo(last.author.date),
        }
      : {}),
    type,
    size: entry.size,
    encoding: extras.contentBase64 === null ? null : 'base64',
    content: extras.contentBase64,
    target: extras.target,
    url: self,
    html_url: htmlUrl,
    git_url: gitUrl,
    download_url: downloadable ? `${html}/raw/${refWebLinkPath(ref)}/${pathEscapeSegments(path)}` : null,
    submodule_git_url: extras.submoduleUrl,
    _links: { self, git: gitUrl, html: htmlUrl },
  };
}

/** Gitea's `GetFileCommitResponse`: dates in UTC, parents and tree without dates. */
export function toFileCommitResponse(
  config: ForgeConfig,
  owner: UserRow,
  repo: RepositoryRow,
  commit: GitCommit,
): FileCommitResponse {
  return {
    url: commitApiUrl(config, owner, repo, commit.sha),
    sha: commit.sha,
    created: GO_ZERO_TIME,
    html_url: `${repoHtmlUrl(config, owner, repo)}/commit/${encodeURIComponent(commit.sha)}`,
    author: toCommitUser(commit.author, gitDateAsUtc),
    committer: toCommitUser(commit.committer, gitDateAsUtc),
    parents: commit.parents.map((sha) => ({
      url: commitApiUrl(config, owner, repo, sha),
      sha,
      created: GO_ZERO_TIME,
    })),
    message: commit.message,
    tree: {
      url: treeApiUrl(config, owner, repo, commit.treeSha),
      sha: commit.treeSha,
      created: GO_ZERO_TIME,
    },
  };
}
