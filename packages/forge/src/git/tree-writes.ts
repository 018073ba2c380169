/**
 * Making one commit from a set of file changes with plumbing only, in the bare repository: blobs are
 * written with `hash-object`, the new tree is built in a throw-away index (GIT_INDEX_FILE) from the base
 * commit's tree, the commit with `commit-tree`, and the branch moves with `update-ref <new> <old>`, a
 * compare-and-swap: if anything else moved the branch since `old` was read, nothing changes and the
 * caller learns it (BranchMoved). No work tree is ever checked out, and no path is ever an argument.
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitCommandError, runGit } from './command.js';
import { type GitSignature, resolveCommit, ZERO_SHA } from './repository.js';

/** One path's new state: bytes (or an existing blob) with a mode, or gone. */
export type TreeChange =
  | { path: string; content: Buffer; mode: string }
  | { path: string; blobSha: string; mode: string }
  | { path: string; delete: true };

/** Author and committer of a new commit. */
export interface CommitIdentity {
  author: GitSignature;
  committer: GitSignature;
}

/** The branch moved between reading it and updating it: nothing was changed. */
export class BranchMoved extends Error {
  constructor(readonly ref: string) {
    super(`${ref} moved while the commit was being made`);
    this.name = 'BranchMoved';
  }
}

function signatureEnv(identity: CommitIdentity): Record<string, string> {
  const date = (when: Date | undefined) => `${Math.floor((when ?? new Date()).getTime() / 1000)} +0000`;
  return {
    GIT_AUTHOR_NAME: identity.author.name,
    GIT_AUTHOR_EMAIL: identity.author.email,
    GIT_AUTHOR_DATE: date(identity.author.when),
    GIT_COMMITTER_NAME: identity.committer.name,
    GIT_COMMITTER_EMAIL: identity.committer.email,
    GIT_COMMITTER_DATE: date(identity.committer.when),
  };
}

/** Writes `content` as a blob object and returns its id. */
export async function writeBlob(gitDir: string, content: Buffer): Promise<string> {
  return (await runGit(['hash-object', '-w', '--stdin'], { gitDir, input: content })).stdout.trim();
}

/** The tree of `base` (none: the empty tree) with `changes` applied, built in a private index. */
export async function buildTree(
  gitDir: string,
  base: string | null,
  changes: readonly TreeChange[],
): Promise<string> {
  const indexFile = join(tmpdir(), `forge-index-${randomBytes(12).toString('hex')}`);
  const env = { GIT_INDEX_FILE: indexFile };
  try {
    if (base) await runGit(['read-tree', base], { gitDir, env });
    else await runGit(['read-tree', '--empty'], { gitDir, env });
    const lines: string[] = [];
    for (const change of changes) {
      if ('delete' in change) {
        lines.push(`0 ${ZERO_SHA}\t${change.path}`);
      } else {
        const blob = 'blobSha' in change ? change.blobSha : await writeBlob(gitDir, change.content);
        lines.push(`${change.mode} ${blob}\t${change.path}`);
      }
    }
    // NUL-terminated index lines: any path reads back intact, and paths never reach argv.
    await runGit(['update-index', '-z', '--index-info'], { gitDir, env, input: `${lines.join('\0')}\0` });
    return (await runGit(['write-tree'], { gitDir, env })).stdout.trim();
  } finally {
    await rm(indexFile, { force: true });
    await rm(`${indexFile}.lock`, { force: true });
  }
}

/** Makes a commit of `tree` on top of `parent` (none: a root commit); the message goes through stdin. */
export async function makeCommit(
  gitDir: string,
  options: { tree: string; parent: string | null; message: string; identity: CommitIdentity },
): Promise<string> {
  const parents = options.parent ? ['-p', options.parent] : [];
  const { stdout } = await runGit(['commit-tree', options.tree, ...parents, '-F', '-'], {
    gitDir,
    env: signatureEnv(options.identity),
    // Gitea ends every message it commits with a newline.
    input: options.message.endsWith('\n') ? options.message : `${options.message}\n`,
  });
  return stdout.trim();
}

/**
 * Points `ref` at `commit` only if it still points at `expected` (ZERO_SHA: only if it does not exist);
 * throws BranchMoved otherwise, leaving the ref as it was.
 */
export async function moveRef(gitDir: string, ref: string, commit: string, expected: string): Promise<void> {
  try {
    await runGit(['update-ref', '-m', 'forge: contents API', ref, commit, expected], { gitDir });
  } catch (error) {
    if (!(error instanceof GitCommandError)) throw error;
    const current = await resolveCommit(gitDir, ref);
    if ((current ?? ZERO_SHA) !== expected) throw new BranchMoved(ref);
    throw error;
  }
}
