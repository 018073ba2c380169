/**
 * Reading commits and refs of a bare repository with the git CLI: history pages (`git log`), one commit,
 * the files a commit touched and its line counts, and the refs under `refs/`. Every caller-supplied
 * revision goes after `--end-of-options` or is checked first, so no user text can become an option.
 */
import { runGit } from './command.js';

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

// Nine NUL-separated fields per commit, and `-z` ends each commit with a NUL too: a fixed field count
// keeps empty fields (a root commit's parents, an empty e-mail) unambiguous; git messages never hold NUL.
const COMMIT_FORMAT = '%H%x00%T%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B';
const COMMIT_FIELDS = 10;

function parseCommits(stdout: string): GitCommit[] {
  const fields = stdout.split('\0');
  const commits: GitCommit[] = [];
  for (let i = 0; i + COMMIT_FIELDS <= fields.length; i += COMMIT_FIELDS) {
    const [sha, treeSha, parents, an, ae, ad, cn, ce, cd, message] = fields.slice(i, i + COMMIT_FIELDS) as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    commits.push({
      sha,
      treeSha,
      parents: parents === '' ? [] : parents.split(' '),
      author: { name: an, email: ae, date: ad },
      committer: { name: cn, email: ce, date: cd },
      message,
    });
  }
  return commits;
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
  const { stdout } = await runGit(
    [
      'log',
      '-z',
      `--format=${COMMIT_FORMAT}`,
      `--skip=${page.skip}`,
      `--max-count=${page.limit}`,
      ...historyArgs(filter),
    ],
    { gitDir },
  );
  return parseCommits(stdout);
}

/** Number of commits of a history walk. */
export async function countHistory(gitDir: string, filter: HistoryFilter): Promise<number> {
  const { stdout } = await runGit(['rev-list', '--count', ...historyArgs(filter)], { gitDir });
  return Number(stdout.trim());
}

/** One commit by full id (the caller resolved it), or null. */
export async function readCommit(gitDir: string, sha: string): Promise<GitCommit | null> {
  if (!/^[0-9a-f]{40}$/.test(sha)) return null;
  const result = await runGit(
    ['log', '-z', '-1', `--format=${COMMIT_FORMAT}`, '--end-of-options', sha, '--'],
    {
      gitDir,
      okExitCodes: [128],
    },
  );
  return result.exitCode === 0 ? (parseCommits(result.stdout)[0] ?? null) : null;
}

/** The files a commit changed against its first parent (the empty tree for a root commit), by name. */
export async function commitFileChanges(gitDir: string, commit: GitCommit): Promise<GitFileChange[]> {
  const base = commit.parents[0] ?? EMPTY_TREE_SHA;
  const { stdout } = await runGit(
    ['diff-tree', '-r', '-z', '--no-renames', '--name-status', base, commit.sha],
    {
      gitDir,
    },
  );
  const fields = stdout.split('\0');
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
  const base = commit.parents[0] ?? EMPTY_TREE_SHA;
  const { stdout } = await runGit(['diff-tree', '-r', '-z', '--no-renames', '--numstat', base, commit.sha], {
    gitDir,
  });
  let additions = 0;
  let deletions = 0;
  for (const entry of stdout.split('\0')) {
    const match = /^(\d+|-)\t(\d+|-)\t/.exec(entry);
    if (!match) continue;
    if (match[1] !== '-') additions += Number(match[1]);
    if (match[2] !== '-') deletions += Number(match[2]);
  }
  return { additions, deletions };
}

/** Every ref under `refs/`, sorted by name, with the type of the object it points to. */
export async function listAllRefs(gitDir: string): Promise<GitRef[]> {
  const { stdout } = await runGit(
    ['for-each-ref', '--sort=refname', '--format=%(objectname)%00%(objecttype)%00%(refname)', 'refs/'],
    { gitDir },
  );
  const refs: GitRef[] = [];
  for (const line of stdout.split('\n')) {
    const [objectSha, objectType, name] = line.split('\0');
    if (objectSha && objectType && name) refs.push({ name, objectSha, objectType });
  }
  return refs;
}
