/**
 * Changing files through the contents API (Gitea's services/repository/files ChangeRepoFiles), one commit
 * per request on `branch` (default: the default branch) or on `new_branch` made from it:
 *  - archived repositories are locked (423); an unknown branch is 404 unless the repository is empty;
 *    a `new_branch` that exists is 422;
 *  - create: the path must be free (422 "repository file already exists"); update and delete: the file
 *    must exist (404) and `sha` must be its current blob id (422 "sha does not match"), so a writer that
 *    read an older version changes nothing; upload: create or overwrite; rename: move `from_path`;
 *  - a path through an existing file, or onto a directory, is 422; `..`, NUL and `.git` paths are 422;
 *  - the branch moves only from the commit the change was checked against: a concurrent push or write
 *    makes this one start over against the new head (and a now-stale `sha` is refused then);
 *  - the commit is announced as a push by the doer would be (activity, push webhooks). Once the branch
 *    has moved the write has happened: a failure to announce it does not fail the request (it is
 *    reported in `announceError`), and the ref journal announces it later (webhooks/ref-journal.ts).
 */
import { Conflict, Invalid, Locked, NotFoundMessage } from '../errors.js';
import { type GitCommit, readCommit } from '../git/commits.js';
import {
  assertValidRefName,
  hasNoBranches,
  InvalidRefNameError,
  resolveCommit,
  ZERO_SHA,
} from '../git/repository.js';
import { GitMode, type GitTreeEntry, treeEntry } from '../git/tree.js';
import { BranchMoved, buildTree, makeCommit, moveRef, type TreeChange } from '../git/tree-writes.js';
import { journalRefWrite } from '../webhooks/ref-journal.js';
import {
  commitIdentity,
  type DatesInput,
  defaultCommitMessage,
  type IdentityInput,
  withSignoff,
} from './commit-identity.js';
import { type ContentsEntry, entryExtras } from './contents.js';
import type { RefCommit } from './refs.js';
import { type RepoContext, requireDoer } from './repo-context.js';
import { serialiseRepoWrite } from './repo-write-queue.js';
import { cleanTreePath, MalformedTreePath } from './tree-paths.js';

/** One file operation as the request gave it. */
export interface FileOperationInput {
  operation: 'create' | 'update' | 'upload' | 'rename' | 'delete';
  path: string;
  /** Base64 content (create, update, upload; optional for rename). */
  content?: string;
  sha?: string;
  fromPath?: string;
}

/** A contents-API change request. */
export interface ChangeFilesInput {
  branch?: string;
  newBranch?: string;
  message?: string;
  author?: IdentityInput;
  committer?: IdentityInput;
  dates?: DatesInput;
  signoff?: boolean;
  files: FileOperationInput[];
}

/** The commit made and each changed path's new entry (null where a file was deleted). */
export interface ChangeFilesResult {
  ref: RefCommit;
  commit: GitCommit;
  files: Array<ContentsEntry | null>;
  /**
   * Why announcing the commit (activity, webhook events) failed after the branch moved, for the log;
   * undefined when it did not. The journal row stays and its repair announces the commit.
   */
  announceError?: unknown;
}

/** How many times a write starts over after losing the branch to a concurrent writer. */
const MAX_ATTEMPTS = 8;

/** Go's base64.StdEncoding: padded, line breaks ignored; anything else is refused with its offset. */
function decodeBase64(text: string): Buffer {
  const compact = text.replace(/[\r\n]/g, '');
  const bad = compact.search(/[^A-Za-z0-9+/=]|=[^=]|={3}/);
  if (bad >= 0 || compact.length % 4 !== 0) {
    throw new Invalid(`illegal base64 data at input byte ${bad >= 0 ? bad : compact.length}`);
  }
  return Buffer.from(compact, 'base64');
}

function writePath(raw: string): string {
  try {
    const path = cleanTreePath(raw, true);
    if (path === '') throw new MalformedTreePath(raw);
    return path;
  } catch (error) {
    if (error instanceof MalformedTreePath) throw new Invalid(error.message);
    throw error;
  }
}

async function branchName(field: string, name: string): Promise<void> {
  try {
    await assertValidRefName(`refs/heads/${name}`);
  } catch (error) {
    if (error instanceof InvalidRefNameError) throw new Invalid(`[${field}]: GitRefName`);
    throw error;
  }
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: a NUL can never be part of a commit or ref.
const NUL = /\u0000/;

/** One operation, validated and decoded before anything is read from git. */
interface PlannedOperation {
  input: FileOperationInput;
  path: string;
  fromPath: string;
  content: Buffer | null;
}

function planOperations(files: readonly FileOperationInput[]): PlannedOperation[] {
  if (files.length === 0) throw new Invalid('[Files]: Required');
  return files.map((input) => {
    const path = writePath(input.path);
    if (input.operation === 'rename' && !input.fromPath) throw new Invalid('[FromPath]: Required');
    const fromPath = input.fromPath ? writePath(input.fromPath) : path;
    const needsContent = ['create', 'update', 'upload'].includes(input.operation);
    const content =
      input.content !== undefined ? decodeBase64(input.content) : needsContent ? Buffer.alloc(0) : null;
    return { input, path, fromPath, content };
  });
}

/** Gitea's ErrFilePathInvalid checks for writing `path`: every parent a directory, `path` not one. */
async function assertPathWritable(
  gitDir: string,
  base: string | null,
  path: string,
): Promise<GitTreeEntry | null> {
  if (!base) return null;
  const parts = path.split('/');
  for (let i = 1; i < parts.length; i++) {
    const prefix = parts.slice(0, i).join('/');
    const entry = await treeEntry(gitDir, base, prefix);
    if (!entry) break;
    if (entry.type !== 'tree') {
      const what = entry.mode === GitMode.Symlink ? 'a symbolic link' : 'a file';
      throw new Invalid(`${what} exists where you’re trying to create a subdirectory [path: ${prefix}]`);
    }
  }
  const entry = await treeEntry(gitDir, base, path);
  if (entry?.type === 'tree') {
    throw new Invalid(`a directory exists where you’re trying to create a file [path: ${path}]`);
  }
  return entry;
}

async function existingFile(gitDir: string, base: string | null, path: string): Promise<GitTreeEntry> {
  const entry = base ? await treeEntry(gitDir, base, path) : null;
  if (entry?.type !== 'blob') throw new NotFoundMessage(`repository file does not exist [path: ${path}]`);
  return entry;
}

function assertSha(given: string | undefined, entry: GitTreeEntry, required: boolean): void {
  if (!given) {
    if (required) throw new Invalid('a SHA or commit ID must be proved when updating a file');
    return;
  }
  if (given !== entry.sha) throw new Invalid(`sha does not match [given: ${given}, expected: ${entry.sha}]`);
}

/** The tree changes of every operation against `base`; throws the first rule an operation breaks. */
async function treeChanges(
  gitDir: string,
  base: string | null,
  plan: readonly PlannedOperation[],
): Promise<TreeChange[]> {
  const changes: TreeChange[] = [];
  for (const op of plan) {
    const { operation, sha } = op.input;
    if (operation === 'delete') {
      assertSha(sha, await existingFile(gitDir, base, op.path), true);
      changes.push({ path: op.path, delete: true });
      continue;
    }
    if (operation === 'create') {
      if (await assertPathWritable(gitDir, base, op.path)) {
        throw new Invalid(`repository file already exists [path: ${op.path}]`);
      }
      changes.push({ path: op.path, content: op.content!, mode: GitMode.File });
      continue;
    }
    if (operation === 'upload') {
      const current = await assertPathWritable(gitDir, base, op.path);
      changes.push({ path: op.path, content: op.content!, mode: current?.mode ?? GitMode.File });
      continue;
    }
    // update and rename: the source must exist (and match `sha`); a new path must be free.
    const source = await existingFile(gitDir, base, op.fromPath);
    assertSha(sha, source, operation === 'update');
    if (op.fromPath !== op.path) {
      if (await assertPathWritable(gitDir, base, op.path)) {
        throw new Invalid(`repository file already exists [path: ${op.path}]`);
      }
      changes.push({ path: op.fromPath, delete: true });
    }
    changes.push(
      op.content
        ? { path: op.path, content: op.content, mode: source.mode }
        : { path: op.path, blobSha: source.sha, mode: source.mode },
    );
  }
  return changes;
}

/** Checks the request's own fields (no git needed) and returns the branches it names. */
async function checkRequest(
  ctx: RepoContext,
  input: ChangeFilesInput,
): Promise<{ branch: string; newBranch: string }> {
  if (ctx.repo.is_archived === 1) throw new Locked('repo is archived');
  const texts = [
    input.message,
    input.author?.name,
    input.author?.email,
    input.committer?.name,
    input.committer?.email,
  ];
  if (texts.some((text) => text !== undefined && NUL.test(text)))
    throw new Invalid('[Message]: NUL bytes are not allowed');
  const branch = input.branch || ctx.repo.default_branch;
  const newBranch = input.newBranch || branch;
  await branchName('BranchName', branch);
  await branchName('NewBranchName', newBranch);
  return { branch, newBranch };
}

/** Makes the commit and moves the branch once; BranchMoved when another writer got there first. */
async function attempt(
  ctx: RepoContext,
  input: ChangeFilesInput,
  plan: readonly PlannedOperation[],
  branches: { branch: string; newBranch: string },
): Promise<{ base: string | null; commit: string }> {
  const base = await resolveCommit(ctx.gitDir, `refs/heads/${branches.branch}`);
  if (!base && !(await hasNoBranches(ctx.gitDir))) {
    throw new NotFoundMessage(`branch does not exist [name: ${branches.branch}]`);
  }
  const creating = branches.newBranch !== branches.branch;
  if (creating && (await resolveCommit(ctx.gitDir, `refs/heads/${branches.newBranch}`))) {
    throw new Invalid(`branch already exists [name: ${branches.newBranch}]`);
  }
  const changes = await treeChanges(ctx.gitDir, base, plan);
  const doer = requireDoer(ctx);
  const identity = commitIdentity(ctx, doer, input);
  const message = withSignoff(
    input.message ||
      defaultCommitMessage(plan.map((op) => ({ operation: op.input.operation, path: op.input.path }))),
    identity.committer,
    input.signoff ?? false,
  );
  const tree = await buildTree(ctx.gitDir, base, changes);
  const commit = await makeCommit(ctx.gitDir, { tree, parent: base, message, identity });
  await moveRef(
    ctx.gitDir,
    `refs/heads/${branches.newBranch}`,
    commit,
    creating ? ZERO_SHA : (base ?? ZERO_SHA),
  );
  return { base: creating ? null : base, commit };
}

/** `POST /contents`, and the single-file routes: one commit with every operation, or nothing. */
export async function changeRepoFiles(ctx: RepoContext, input: ChangeFilesInput): Promise<ChangeFilesResult> {
  const branches = await checkRequest(ctx, input);
  const plan = planOperations(input.files);
  const doer = requireDoer(ctx);
  const made = await serialiseRepoWrite(ctx.repo.id, async () => {
    for (let tries = 1; ; tries++) {
      try {
        const journal = await journalCommit(ctx, doer, branches.newBranch);
        let result: { base: string | null; commit: string };
        try {
          result = await attempt(ctx, input, plan, branches);
        } catch (error) {
          await journal.discard();
          throw error;
        }
        // The branch has moved: from here on the write has happened, and the answer says so.
        const ref = `refs/heads/${branches.newBranch}`;
        const announceError = await journal
          .announce([{ ref, oldSha: result.base ?? ZERO_SHA, newSha: result.commit }])
          .then(
            () => undefined,
            (error: unknown) => error ?? new Error('announcing the commit failed'),
          );
        return { ...result, announceError };
      } catch (error) {
        if (!(error instanceof BranchMoved)) throw error;
        if (tries >= MAX_ATTEMPTS) throw new Conflict(`branch ${branches.newBranch} kept moving; try again`);
      }
    }
  });
  const commit = (await readCommit(ctx.gitDir, made.commit))!;
  const ref: RefCommit = {
    kind: 'branch',
    name: branches.newBranch,
    inputRef: branches.newBranch,
    commitSha: made.commit,
  };
  const files: Array<ContentsEntry | null> = [];
  for (const op of plan) {
    if (op.input.operation === 'delete') {
      files.push(null);
      continue;
    }
    const entry = (await treeEntry(ctx.gitDir, made.commit, op.path))!;
    files.push({ path: op.path, entry, extras: await entryExtras(ctx, ref, op.path, entry, true) });
  }
  return { ref, commit, files, announceError: made.announceError };
}

/**
 * A contents-API commit is announced as a git push of it by the doer would be (api/git-http.ts):
 * commit_repo activity, the empty flag and default branch, and the `push` webhook event, journalled
 * before the branch moves so a crash after it still sends the event (webhooks/ref-journal.ts).
 */
async function journalCommit(ctx: RepoContext, doer: RepoContext['owner'], branch: string) {
  const ref = `refs/heads/${branch}`;
  const current = (await resolveCommit(ctx.gitDir, ref)) ?? ZERO_SHA;
  const source = { ctx, gitDir: ctx.gitDir, repo: ctx.repo, owner: ctx.owner, pusher: doer };
  return journalRefWrite(source, new Map([[ref, current]]), false);
}
