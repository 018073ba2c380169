import { mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { GitCommandError, runGit } from './command.js';
import { logCommits } from './commits.js';
import { forEachRef } from './records.js';

/** The all-zero object id: as an old value it means "the ref must not exist yet". */
export const ZERO_SHA = '0000000000000000000000000000000000000000';

/** Who authors a commit or a tag. */
export interface GitSignature {
  name: string;
  email: string;
  /** Defaults to now. */
  when?: Date;
}

/** A tag as git sees it. */
export interface GitTag {
  name: string;
  /** The tag object for annotated tags, else the commit (Gitea's `Tag.ID`). */
  objectSha: string;
  commitSha: string;
  annotated: boolean;
  /** Annotated: the tag message; lightweight: the commit message (as Gitea). */
  message: string;
  /** Tagger date for annotated tags, committer date for lightweight ones (unix seconds). */
  createdUnix: number;
  /** Committer date of the tagged commit, RFC 3339. */
  commitDate: string;
}

/** A branch head as git sees it. */
export interface GitBranch {
  name: string;
  commitSha: string;
  message: string;
  commitDate: string;
  authorName: string;
  authorEmail: string;
  committerName: string;
  committerEmail: string;
}

/** One commit of a push, for activity rows. */
export interface GitCommitSummary {
  sha: string;
  message: string;
  authorName: string;
  authorEmail: string;
  committerName: string;
  committerEmail: string;
  timestamp: string;
}

/** A tag name git refuses (`git check-ref-format`). */
export class InvalidRefNameError extends Error {
  constructor(readonly refName: string) {
    super(`invalid ref name "${refName}"`);
    this.name = 'InvalidRefNameError';
  }
}

/** The tag already exists (a concurrent creator won the race, or it was there before). */
export class TagExistsError extends Error {
  constructor(readonly tagName: string) {
    super(`tag already exists [name: ${tagName}]`);
    this.name = 'TagExistsError';
  }
}

/** `<root>/<owner>/<repo>.git`, lower-cased as Gitea lays repositories out. */
export function repositoryPath(root: string, owner: string, repo: string): string {
  return join(root, owner.toLowerCase(), `${repo.toLowerCase()}.git`);
}

/** Creates an empty bare repository whose HEAD names `defaultBranch`. */
export async function initBareRepository(path: string, defaultBranch: string): Promise<void> {
  await assertValidRefName(`refs/heads/${defaultBranch}`);
  await mkdir(dirname(path), { recursive: true });
  await runGit(['init', '--bare', '--quiet', `--initial-branch=${defaultBranch}`, path]);
  // Authorisation is the forge's job (smart-HTTP checks write access before receive-pack runs).
  await runGit(['config', 'http.receivepack', 'true'], { gitDir: path });
}

/** Removes a repository directory; missing directories are fine. */
export async function removeRepository(path: string): Promise<void> {
  await rm(path, { recursive: true, force: true });
}

function signatureEnv(who: GitSignature): Record<string, string> {
  const date = `${Math.floor((who.when ?? new Date()).getTime() / 1000)} +0000`;
  return {
    GIT_AUTHOR_NAME: who.name,
    GIT_AUTHOR_EMAIL: who.email,
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_NAME: who.name,
    GIT_COMMITTER_EMAIL: who.email,
    GIT_COMMITTER_DATE: date,
  };
}

/**
 * Makes the first commit (one README.md) on `branch` of an empty bare repository, with plumbing only, so
 * no work tree is ever checked out. Fails if the branch already exists.
 */
export async function commitInitialReadme(
  gitDir: string,
  options: { branch: string; readme: string; author: GitSignature; message?: string },
): Promise<string> {
  const blob = (
    await runGit(['hash-object', '-w', '--stdin'], { gitDir, input: options.readme })
  ).stdout.trim();
  const tree = (
    await runGit(['mktree'], { gitDir, input: `100644 blob ${blob}\tREADME.md\n` })
  ).stdout.trim();
  const commit = (
    await runGit(['commit-tree', tree, '-m', options.message ?? 'Initial commit'], {
      gitDir,
      env: signatureEnv(options.author),
    })
  ).stdout.trim();
  await runGit(['update-ref', `refs/heads/${options.branch}`, commit, ZERO_SHA], { gitDir });
  return commit;
}

/** Throws InvalidRefNameError unless git accepts `ref` as a full ref name. */
export async function assertValidRefName(ref: string): Promise<void> {
  // Loose refs are files: a component longer than a file name may be fails in git after the checks.
  if (ref.split('/').some((part) => Buffer.byteLength(part) > 255)) throw new InvalidRefNameError(ref);
  const result = await runGit(['check-ref-format', ref], { okExitCodes: [1] });
  if (result.exitCode !== 0 || ref.includes('/-')) throw new InvalidRefNameError(ref);
}

/** Commit id a branch, tag or sha names, or null when it names no commit. */
export async function resolveCommit(gitDir: string, commitish: string): Promise<string | null> {
  if (commitish === '' || commitish.startsWith('-')) return null;
  const result = await runGit(
    ['rev-parse', '--verify', '--quiet', '--end-of-options', `${commitish}^{commit}`],
    {
      gitDir,
      okExitCodes: [1, 128],
    },
  );
  return result.exitCode === 0 ? result.stdout.trim() : null;
}

/** True when the repository has no branch at all. */
export async function hasNoBranches(gitDir: string): Promise<boolean> {
  const { stdout } = await runGit(['for-each-ref', '--count=1', '--format=%(refname)', 'refs/heads/'], {
    gitDir,
  });
  return stdout.trim() === '';
}

/** Number of commits reachable from `sha` (Gitea's `num_commits`). */
export async function countCommits(gitDir: string, sha: string): Promise<number> {
  const { stdout } = await runGit(['rev-list', '--count', sha, '--'], { gitDir });
  return Number(stdout.trim());
}

/** Every ref under refs/heads and refs/tags with the object it points to. */
export async function listRefs(gitDir: string): Promise<Map<string, string>> {
  const fields = { name: '%(refname)', sha: '%(objectname)' };
  const records = await forEachRef(gitDir, fields, ['refs/heads/', 'refs/tags/']);
  return new Map(records.map((ref) => [ref.name, ref.sha]));
}

/** The for-each-ref atoms a tag is read from (`contents` may span lines). */
const TAG_FIELDS = {
  name: '%(refname:lstrip=2)',
  objectSha: '%(objectname)',
  type: '%(objecttype)',
  peeled: '%(*objectname)',
  created: '%(creatordate:unix)',
  ownDate: '%(committerdate:iso-strict)',
  peeledDate: '%(*committerdate:iso-strict)',
  message: '%(contents)',
} as const;

async function readTags(gitDir: string, pattern: string, sort?: string): Promise<GitTag[]> {
  const tags: GitTag[] = [];
  for (const tag of await forEachRef(gitDir, TAG_FIELDS, [pattern], sort)) {
    const annotated = tag.type === 'tag';
    // A tag of a tree or blob has no commit; the forge's API only deals in commit tags.
    if (annotated ? tag.peeled === '' : tag.type !== 'commit') continue;
    tags.push({
      name: tag.name,
      objectSha: tag.objectSha,
      commitSha: annotated ? tag.peeled : tag.objectSha,
      annotated,
      message: tag.message,
      createdUnix: Number(tag.created),
      commitDate: annotated ? tag.peeledDate : tag.ownDate,
    });
  }
  return tags;
}

/** All commit tags, newest tag/commit date first (Gitea lists tags by creator date, descending). */
export async function listTags(gitDir: string): Promise<GitTag[]> {
  return readTags(gitDir, 'refs/tags/', '-creatordate');
}

/** One tag by exact name, or null. */
export async function getTag(gitDir: string, name: string): Promise<GitTag | null> {
  return (await readTags(gitDir, `refs/tags/${name}`)).find((tag) => tag.name === name) ?? null;
}

/** The for-each-ref atoms a branch is read from, by GitBranch's names (`message` may span lines). */
const BRANCH_FIELDS = {
  name: '%(refname:lstrip=2)',
  commitSha: '%(objectname)',
  commitDate: '%(committerdate:iso-strict)',
  authorName: '%(authorname)',
  authorEmail: '%(authoremail:trim)',
  committerName: '%(committername)',
  committerEmail: '%(committeremail:trim)',
  message: '%(contents)',
} as const;

/** All branches, sorted by name. */
export async function listBranches(gitDir: string): Promise<GitBranch[]> {
  return forEachRef(gitDir, BRANCH_FIELDS, ['refs/heads/'], 'refname');
}

/** One branch by exact name, or null. */
export async function getBranch(gitDir: string, name: string): Promise<GitBranch | null> {
  const branches = await forEachRef(gitDir, BRANCH_FIELDS, [`refs/heads/${name}`]);
  return branches.find((branch) => branch.name === name) ?? null;
}

/**
 * Creates `refs/tags/<name>` at `commitSha`, annotated when `message` is non-empty. The ref is written
 * with the zero old value, so of several concurrent creators of one tag exactly one succeeds and the
 * others get TagExistsError.
 */
export async function createTag(
  gitDir: string,
  options: { name: string; commitSha: string; message?: string; tagger: GitSignature },
): Promise<GitTag> {
  const ref = `refs/tags/${options.name}`;
  await assertValidRefName(ref);
  let object = options.commitSha;
  if (options.message) {
    const when = Math.floor((options.tagger.when ?? new Date()).getTime() / 1000);
    const body = options.message.endsWith('\n') ? options.message : `${options.message}\n`;
    const tagText =
      `object ${options.commitSha}\ntype commit\ntag ${options.name}\n` +
      `tagger ${options.tagger.name} <${options.tagger.email}> ${when} +0000\n\n${body}`;
    object = (await runGit(['mktag'], { gitDir, input: tagText })).stdout.trim();
  }
  try {
    await runGit(['update-ref', '-m', 'forge: create tag', ref, object, ZERO_SHA], { gitDir });
  } catch (error) {
    if (error instanceof GitCommandError && (await getTag(gitDir, options.name))) {
      throw new TagExistsError(options.name);
    }
    throw error;
  }
  const tag = await getTag(gitDir, options.name);
  if (!tag) throw new Error(`tag ${options.name} vanished right after creation`);
  return tag;
}

/** Deletes `refs/tags/<name>`; false when it did not exist. */
export async function deleteTag(gitDir: string, name: string): Promise<boolean> {
  const ref = `refs/tags/${name}`;
  const current = (
    await runGit(['rev-parse', '--verify', '--quiet', ref], { gitDir, okExitCodes: [1] })
  ).stdout.trim();
  if (!current) return false;
  // The expected old value makes the delete lose (and report) a race with a concurrent re-point.
  await runGit(['update-ref', '-d', ref, current], { gitDir });
  return true;
}

/** Points HEAD (the default branch) at `branch`. */
export async function setHeadBranch(gitDir: string, branch: string): Promise<void> {
  await assertValidRefName(`refs/heads/${branch}`);
  await runGit(['symbolic-ref', 'HEAD', `refs/heads/${branch}`], { gitDir });
}

/** The branch HEAD names (it may not exist yet in an empty repository). */
export async function headBranch(gitDir: string): Promise<string> {
  const { stdout } = await runGit(['symbolic-ref', '--short', 'HEAD'], { gitDir });
  return stdout.trim();
}

/**
 * Newest-first commits reachable from `newSha` but not from `oldSha` (all history when old is zero),
 * at most `limit` of them.
 */
export async function commitsBetween(
  gitDir: string,
  oldSha: string,
  newSha: string,
  limit: number,
): Promise<GitCommitSummary[]> {
  const range = oldSha === ZERO_SHA ? [newSha] : [newSha, `^${oldSha}`];
  const commits = await logCommits(gitDir, [`--max-count=${limit}`, '--end-of-options', ...range, '--']);
  return (commits ?? []).map((commit) => ({
    sha: commit.sha,
    authorName: commit.author.name,
    authorEmail: commit.author.email,
    committerName: commit.committer.name,
    committerEmail: commit.committer.email,
    timestamp: commit.committer.date,
    message: commit.message,
  }));
}
