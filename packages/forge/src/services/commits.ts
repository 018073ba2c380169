/**
 * Commit history and refs of a repository (Gitea's routers/api/v1/repo/commits.go and git_ref.go):
 *  - an empty repository answers 409 "Git Repository is empty." to the history list;
 *  - `sha` names the start (branch, tag or commit; default branch when absent), unknown → 404;
 *  - with `path`, pages hold CommitsRangeSize (50) commits whatever `limit` says, and no commit → 404;
 *  - `limit` is capped at CommitsRangeSize; every commit is rendered with stats, files and verification
 *    unless the caller turns them off.
 */
import type { CommitDetails, CommitParts } from '../convert/commit.js';
import { Conflict, Invalid, NotFound } from '../errors.js';
import {
  commitFileChanges,
  commitStats,
  countHistory,
  type GitCommit,
  type GitRef,
  type HistoryFilter,
  listAllRefs,
  listCommits,
  readCommit,
} from '../git/commits.js';
import { resolveCommit } from '../git/repository.js';
import type { UserRow } from '../store/schema.js';
import { findUserByEmail } from '../store/users.js';
import type { RepoContext } from './repo-context.js';
import { cleanTreePath, MalformedTreePath } from './tree-paths.js';

/** Gitea's `setting.Git.CommitsRangeSize`: the most commits one page holds. */
export const COMMITS_RANGE_SIZE = 50;

/** Gitea's `git.IsValidRefPattern`: what may be looked up as a ref or sha at all. */
export function isValidRefPattern(name: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control bytes are never part of a ref.
  const invalid = /[\u0000-\u0020\u007f\\~^:?*[]|^\/|\/$|\/\/|\/\.|\.lock$|@\{|^-/;
  return name !== '' && !invalid.test(name) && !name.includes('..');
}

/** A history query as the route read it. */
export interface CommitListInput {
  sha: string;
  path: string;
  since?: number;
  until?: number;
  not: string;
  page: number;
  limit: number;
  parts: CommitParts;
}

/** One page of history with what the list headers need. */
export interface CommitPage {
  commits: CommitDetails[];
  total: number;
  page: number;
  pageSize: number;
}

async function resolveOrNotFound(ctx: RepoContext, revision: string): Promise<string> {
  const sha = isValidRefPattern(revision) ? await resolveCommit(ctx.gitDir, revision) : null;
  if (!sha) throw new NotFound(undefined, [`object does not exist [id: ${revision}, rel_path: ]`]);
  return sha;
}

/** The user whose e-mail a commit carries, looked up once per e-mail for a page. */
function userLookup(ctx: RepoContext): (email: string) => Promise<UserRow | null> {
  const seen = new Map<string, Promise<UserRow | null>>();
  return (email) => {
    const key = email.toLowerCase();
    let found = seen.get(key);
    if (!found) {
      found = findUserByEmail(ctx.db, email).then((user) => user ?? null);
      seen.set(key, found);
    }
    return found;
  };
}

async function detailsOf(
  ctx: RepoContext,
  commit: GitCommit,
  parts: CommitParts,
  users: (email: string) => Promise<UserRow | null>,
): Promise<CommitDetails> {
  const [authorUser, committerUser, files, stats] = await Promise.all([
    users(commit.author.email),
    users(commit.committer.email),
    parts.files ? commitFileChanges(ctx.gitDir, commit) : null,
    parts.stat ? commitStats(ctx.gitDir, commit) : null,
  ]);
  return { commit, authorUser, committerUser, files, stats };
}

/** `GET /repos/{owner}/{repo}/commits`. */
export async function listRepoCommits(ctx: RepoContext, input: CommitListInput): Promise<CommitPage> {
  if (ctx.repo.is_empty === 1) {
    throw new Conflict('Git Repository is empty.');
  }
  const page = Math.max(input.page, 1);
  const pageSize = Math.min(input.limit, COMMITS_RANGE_SIZE);
  let path = '';
  if (input.path !== '') {
    try {
      path = cleanTreePath(input.path, false);
    } catch (error) {
      if (error instanceof MalformedTreePath) throw new NotFound();
      throw error;
    }
  }
  const start = await resolveOrNotFound(ctx, input.sha || ctx.repo.default_branch);
  const filter: HistoryFilter = { start, path, since: input.since, until: input.until };
  if (input.not) filter.not = await resolveOrNotFound(ctx, input.not);
  const total = await countHistory(ctx.gitDir, filter);
  if (path && total === 0) throw new NotFound();
  const slice = path ? COMMITS_RANGE_SIZE : pageSize;
  const commits = await listCommits(ctx.gitDir, filter, { skip: (page - 1) * slice, limit: slice });
  const users = userLookup(ctx);
  const details = await Promise.all(commits.map((commit) => detailsOf(ctx, commit, input.parts, users)));
  return { commits: details, total, page, pageSize };
}

/** `GET /repos/{owner}/{repo}/git/commits/{sha}`: 422 for what cannot be a ref, 404 when unknown. */
export async function getRepoCommit(
  ctx: RepoContext,
  revision: string,
  parts: CommitParts,
): Promise<CommitDetails> {
  if (!isValidRefPattern(revision)) throw new Invalid(`no valid ref or sha: ${revision}`);
  const sha = await resolveCommit(ctx.gitDir, revision);
  const commit = sha ? await readCommit(ctx.gitDir, sha) : null;
  if (!commit) throw new NotFound(undefined, [`object does not exist [id: ${revision}, rel_path: ]`]);
  return detailsOf(ctx, commit, parts, userLookup(ctx));
}

/**
 * `GET /repos/{owner}/{repo}/git/refs[/{ref}]`: refs whose name starts with `refs/<filter>` (a plain
 * prefix, as Gitea matches), 404 when none; the caller answers one object when exactly one ref matches
 * the filter in full.
 */
export async function listRepoRefs(
  ctx: RepoContext,
  filter: string,
): Promise<{ refs: GitRef[]; exact: boolean }> {
  const prefix = filter ? `refs/${filter}` : '';
  const refs = (await listAllRefs(ctx.gitDir)).filter((ref) => ref.name.startsWith(prefix));
  if (refs.length === 0) throw new NotFound();
  return { refs, exact: refs.length === 1 && refs[0]!.name === prefix };
}
