/**
 * Reading commits and refs of a bare repository with the git CLI: history pages (`git log`), one commit,
 * the files a commit touched and its line counts, and the refs under `refs/`. Every caller-supplied
 * revision goes after `--end-of-options` or is checked first, so no user text can become an option.
 */
import { runGit } from './command.js';
import { forEachRef, nulRecords } from './records.js';

/** The empty tree's id: the "parent" a root commit is diffed against. */
export const EMPTY_TREE_SHA = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** A person line of a commit. */
export interface GitPerson {
  name: string;
  email: string;
  /** Strict ISO 8601 with the commit's own offset (`2026-01-02T03:04:05+02:00`). */
  date: string;
}

/** A commit as git stores it. */
export interface GitCommit {
  sha: string;
  treeSha: string;
  parents: string[];
  author: GitPerson;
  committer: GitPerson;
  /** The full message, as `%B` gives it. */
  message: string;
}

/** How a commit changed one file against its first parent (Gitea's added/removed/modified). */
export interface GitFileChange {
  filename: string;
  status: 'added' | 'removed' | 'modified';
}

/** Lines added and removed by a commit against its first parent. */
export interface GitCommitStats {
  additions: number;
  deletions: number;
}

/** A ref with the object it points to. */
export interface GitRef {
  name: string;
  objectSha: string;
  objectType: string;
}

/** The fields `git log` prints of each commit (the message last: it may span lines). */
const COMMIT_FIELDS = {
  sha: '%H',
  treeSha: '%T',
  parents: '%P',
  authorName: '%an',
  authorEmail: '%ae',
  authorDate: '%aI',
  committerName: '%cn',
  committerEmail: '%ce',
  committerDate: '%cI',
  message: '%B',
} as const;
const COMMIT_NAMES = Object.keys(COMMIT_FIELDS) as Array<keyof typeof COMMIT_FIELDS>;
// With -z, git ends each commit with a NUL: every field is then NUL-separated (records.ts).
const COMMIT_FORMAT = Object.values(COMMIT_FIELDS).join('%x00');

/**
 * `git log -z` of `args` (revisions after `--end-of-options`, then `--`), as commits; null when git
 * exits with one of `okExitCodes` (an unknown revision).
 */
export async function logCommits(
  gitDir: string,
  args: readonly string[],
  okExitCodes: number[] = [],
): Promise<GitCommit[] | null> {
  const result = await runGit(['log', '-z', `--format=${COMMIT_FORMAT}`, ...args], { gitDir, okExitCodes });
  if (result.exitCode !== 0) return null;
  return nulRecords(result.stdout, COMMIT_NAMES).map((fields) => ({
    sha: fields.sha,
    treeSha: fields.treeSha,
    parents: fields.parents === '' ? [] : fields.parents.split(' '),
    author: { name: fields.authorName, email: fields.authorEmail, date: fields.authorDate },
    committer: { name: fields.committerName, email: fields.committerEmail, date: fields.committerDate },
    message: fields.message,
  }));
}

/** Filters of a history walk; `since`/`until` are unix seconds. */
export interface HistoryFilter {
  /** A full commit id (resolved by the caller). */
  start: string;
  /** Only commits touching this path (already validated as a repository path). */
  path?: string;
  since?: number;
  until?: number;
  /** A full commit id whose history is left out (`not`). */
  not?: string;
}

function historyArgs(filter: HistoryFilter): string[] {
  const args: string[] = [];
  if (filter.since !== undefined) args.push(`--since=${filter.since}`);
  if (filter.until !== undefined) args.push(`--until=${filter.until}`);
  args.push('--end-of-options', filter.start);
  if (filter.not) args.push(`^${filter.not}`);
  args.push('--');
  if (filter.path) args.push(`:(literal)${filter.path}`);
  return args;
}

/** Commits of a history walk, newest first, `skip` then at most `limit` of them. */
export async function listCommits(
  gitDir: string,
  filter: HistoryFilter,
  page: { skip: number; limit: number },
): Promise<GitCommit[]> {
  const args = [`--skip=${page.skip}`, `--max-count=${page.limit}`, ...historyArgs(filter)];
  return (await logCommits(gitDir, args)) ?? [];
}

/** Number of commits of a history walk. */
export async function countHistory(gitDir: string, filter: HistoryFilter): Promise<number> {
  const { stdout } = await runGit(['rev-list', '--count', ...historyArgs(filter)], { gitDir });
  return Number(stdout.trim());
}

/** One commit by full id (the caller resolved it), or null. */
export async function readCommit(gitDir: string, sha: string): Promise<GitCommit | null> {
  if (!/^[0-9a-f]{40}$/.test(sha)) return null;
  const commits = await logCommits(gitDir, ['-1', '--end-of-options', sha, '--'], [128]);
  return commits?.[0] ?? null;
}

/** `git diff-tree -z` of a commit against its first parent (the empty tree for a root commit). */
async function diffAgainstParent(
  gitDir: string,
  commit: GitCommit,
  format: '--name-status' | '--numstat',
): Promise<string[]> {
  const base = commit.parents[0] ?? EMPTY_TREE_SHA;
  const args = ['diff-tree', '-r', '-z', '--no-renames', format, base, commit.sha];
  return (await runGit(args, { gitDir })).stdout.split('\0');
}

/** The files a commit changed against its first parent (the empty tree for a root commit), by name. */
export async function commitFileChanges(gitDir: string, commit: GitCommit): Promise<GitFileChange[]> {
  const fields = await diffAgainstParent(gitDir, commit, '--name-status');
  const changes: GitFileChange[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const code = fields[i]!;
    const filename = fields[i + 1]!;
    const status = code === 'A' ? 'added' : code === 'D' ? 'removed' : 'modified';
    changes.push({ filename, status });
  }
  return changes.sort((a, b) => (a.filename < b.filename ? -1 : a.filename > b.filename ? 1 : 0));
}

/** Lines added and removed by a commit against its first parent (binary files count nothing). */
export async function commitStats(gitDir: string, commit: GitCommit): Promise<GitCommitStats> {
  let additions = 0;
  let deletions = 0;
  for (const entry of await diffAgainstParent(gitDir, commit, '--numstat')) {
    const match = /^(\d+|-)\t(\d+|-)\t/.exec(entry);
    if (!match) continue;
    if (match[1] !== '-') additions += Number(match[1]);
    if (match[2] !== '-') deletions += Number(match[2]);
  }
  return { additions, deletions };
}

/** Every ref under `refs/`, sorted by name, with the type of the object it points to. */
export async function listAllRefs(gitDir: string): Promise<GitRef[]> {
  const fields = { name: '%(refname)', objectSha: '%(objectname)', objectType: '%(objecttype)' };
  return forEachRef(gitDir, fields, ['refs/'], 'refname');
}
