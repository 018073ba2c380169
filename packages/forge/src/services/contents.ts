/**
 * Reading a repository's files (Gitea's services/repository/files/content.go and the raw/media routes):
 *  - `ref` defaults to the default branch; a ref naming nothing is 404;
 *  - a file answers its metadata and base64 content (none above the API's 10 MiB blob limit), a directory
 *    a list of its entries without content, a symlink its target, a submodule its URL;
 *  - an empty repository lists its root as `[]`; anything else there is 404;
 *  - raw and media answer a file's bytes; directories and submodules are 404.
 */
import type { EntryExtras } from '../convert/contents.js';
import { NotFound } from '../errors.js';
import { type GitCommit, listCommits, readCommit } from '../git/commits.js';
import {
  GitMode,
  type GitTreeEntry,
  listTree,
  readBlob,
  readBlobHead,
  streamBlob,
  submoduleUrl,
  treeEntry,
} from '../git/tree.js';
import { type RefCommit, resolveRef, splitRefAndPath } from './refs.js';
import type { RepoContext } from './repo-context.js';
import { cleanTreePath, MalformedTreePath } from './tree-paths.js';

/** Gitea's `setting.API.DefaultMaxBlobSize`: larger files are listed without content. */
export const MAX_API_BLOB_SIZE = 10 * 1024 * 1024;
/** Symlink targets are read up to this many bytes (Gitea reads 1024). */
const MAX_SYMLINK_TARGET = 1024;
/** Raw files up to this size are read whole; larger ones are streamed from git. */
const BUFFERED_RAW_SIZE = 1024 * 1024;
/** Leading bytes a raw file's type is sniffed from. */
const SNIFF_BYTES = 1024;

/** One entry with what its answer needs. */
export interface ContentsEntry {
  path: string;
  entry: GitTreeEntry;
  extras: EntryExtras;
}

/** A file (`entry`) or a directory listing (`list`) at one ref. */
export type ContentsResult =
  | { ref: RefCommit; entry: ContentsEntry }
  | { ref: RefCommit; list: ContentsEntry[] };

/** A read path: cleaned, or 404 for what could never name a file. */
function readPath(raw: string): string {
  try {
    return cleanTreePath(raw, false);
  } catch (error) {
    if (error instanceof MalformedTreePath) throw new NotFound(undefined, [error.message]);
    throw error;
  }
}

async function refOrNotFound(ctx: RepoContext, ref: string): Promise<RefCommit> {
  const given = ref || ctx.repo.default_branch;
  const resolved = await resolveRef(ctx.gitDir, given);
  if (!resolved) throw new NotFound(undefined, [`no commit found for the ref [ref: ${given}]`]);
  return resolved;
}

/** The last commit touching `path` at `ref` (the ref's commit for the root). */
export async function lastCommitFor(
  ctx: RepoContext,
  ref: RefCommit,
  path: string,
): Promise<GitCommit | null> {
  if (path === '') return readCommit(ctx.gitDir, ref.commitSha);
  const [last] = await listCommits(ctx.gitDir, { start: ref.commitSha, path }, { skip: 0, limit: 1 });
  return last ?? null;
}

/** Everything one entry's answer shows; `withContent` reads a file's bytes (single-file answers only). */
export async function entryExtras(
  ctx: RepoContext,
  ref: RefCommit,
  path: string,
  entry: GitTreeEntry,
  withContent: boolean,
): Promise<EntryExtras> {
  const extras: EntryExtras = { contentBase64: null, target: null, submoduleUrl: null, lastCommit: null };
  extras.lastCommit = await lastCommitFor(ctx, ref, path);
  if (entry.mode === GitMode.Symlink) {
    const target = await readBlob(ctx.gitDir, entry.sha, Math.max(entry.size, 1));
    extras.target = target.subarray(0, MAX_SYMLINK_TARGET).toString('utf8');
  } else if (entry.mode === GitMode.Submodule) {
    extras.submoduleUrl = await submoduleUrl(ctx.gitDir, ref.commitSha, path);
  } else if (entry.type === 'blob' && withContent && entry.size <= MAX_API_BLOB_SIZE) {
    extras.contentBase64 = (await readBlob(ctx.gitDir, entry.sha, entry.size + 1)).toString('base64');
  }
  return extras;
}

/** `GET /repos/{owner}/{repo}/contents[/{filepath}]`. */
export async function getContents(ctx: RepoContext, rawPath: string, ref: string): Promise<ContentsResult> {
  const path = readPath(rawPath);
  if (ctx.repo.is_empty === 1 && path === '') {
    return { ref: { kind: 'branch', name: ctx.repo.default_branch, inputRef: ref, commitSha: '' }, list: [] };
  }
  const resolved = await refOrNotFound(ctx, ref);
  const entry: GitTreeEntry | null =
    path === ''
      ? { mode: GitMode.Tree, type: 'tree', sha: '', size: 0, name: '' }
      : await treeEntry(ctx.gitDir, resolved.commitSha, path);
  if (!entry) throw new NotFound(undefined, [`object does not exist [id: , rel_path: ${path}]`]);
  if (entry.type !== 'tree') {
    return {
      ref: resolved,
      entry: { path, entry, extras: await entryExtras(ctx, resolved, path, entry, true) },
    };
  }
  const children = (await listTree(ctx.gitDir, resolved.commitSha, path)) ?? [];
  const list: ContentsEntry[] = [];
  for (const child of children) {
    const childPath = path === '' ? child.name : `${path}/${child.name}`;
    list.push({
      path: childPath,
      entry: child,
      extras: await entryExtras(ctx, resolved, childPath, child, false),
    });
  }
  return { ref: resolved, list };
}

/** A file for raw/media: its leading bytes (for sniffing), its body and its last change (Last-Modified). */
export interface RawFile {
  path: string;
  name: string;
  entry: GitTreeEntry;
  head: Buffer;
  body: Buffer | NodeJS.ReadableStream;
  lastModified: Date | null;
}

/** `GET /repos/{owner}/{repo}/raw/{ref}/{filepath}` (or `?ref=`), and `/media/…` (no LFS in the forge). */
export async function getRawFile(ctx: RepoContext, rawPath: string, ref: string): Promise<RawFile> {
  if (ctx.repo.is_empty === 1) throw new NotFound();
  let resolved: RefCommit | null;
  let path: string;
  if (ref) {
    resolved = await refOrNotFound(ctx, ref);
    path = readPath(rawPath);
  } else {
    const split = await splitRefAndPath(ctx.gitDir, rawPath, ctx.repo.default_branch);
    resolved = split.ref;
    path = readPath(split.path);
  }
  if (!resolved || path === '') throw new NotFound();
  const entry = await treeEntry(ctx.gitDir, resolved.commitSha, path);
  if (entry?.type !== 'blob') throw new NotFound();
  const last = await lastCommitFor(ctx, resolved, path);
  const lastModified = last ? new Date(Date.parse(last.committer.date)) : null;
  if (entry.size <= BUFFERED_RAW_SIZE) {
    const bytes = await readBlob(ctx.gitDir, entry.sha, entry.size + 1);
    return { path, name: entry.name, entry, head: bytes.subarray(0, SNIFF_BYTES), body: bytes, lastModified };
  }
  const head = await readBlobHead(ctx.gitDir, entry.sha, SNIFF_BYTES);
  return { path, name: entry.name, entry, head, body: streamBlob(ctx.gitDir, entry.sha), lastModified };
}
