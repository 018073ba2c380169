/**
 * Reading trees and blobs of a bare repository. Paths are given as `<commit>:<path>` object names after
 * `--end-of-options` (git takes the text after the first colon literally), never as options or patterns.
 */
import { runGit, runGitBytes, streamGit } from './command.js';

/** One entry of a tree, as `git ls-tree --long` shows it. */
export interface GitTreeEntry {
  /** `100644`, `100755`, `120000` (symlink), `040000` (tree), `160000` (submodule). */
  mode: string;
  type: 'blob' | 'tree' | 'commit';
  sha: string;
  /** Blob size in bytes; 0 for trees and submodules. */
  size: number;
  name: string;
}

/** Git's file modes for the kinds of entry the contents API distinguishes. */
export const GitMode = {
  File: '100644',
  Executable: '100755',
  Symlink: '120000',
  Tree: '040000',
  Submodule: '160000',
} as const;

function parseTree(stdout: string): GitTreeEntry[] {
  const entries: GitTreeEntry[] = [];
  for (const record of stdout.split('\0')) {
    const tab = record.indexOf('\t');
    if (tab < 0) continue;
    const [mode, type, sha, size] = record.slice(0, tab).trim().split(/\s+/) as [
      string,
      string,
      string,
      string,
    ];
    entries.push({
      mode,
      type: type as GitTreeEntry['type'],
      sha,
      size: size === '-' ? 0 : Number(size),
      name: record.slice(tab + 1),
    });
  }
  return entries;
}

/** Entries of the tree at `path` of `commit` ('' for the root), or null when that is not a tree. */
export async function listTree(gitDir: string, commit: string, path: string): Promise<GitTreeEntry[] | null> {
  const object = path === '' ? `${commit}^{tree}` : `${commit}:${path}`;
  const result = await runGit(['ls-tree', '-z', '--long', '--end-of-options', object], {
    gitDir,
    okExitCodes: [128],
  });
  return result.exitCode === 0 ? parseTree(result.stdout) : null;
}

/** The entry at `path` of `commit` (a non-empty path), or null when nothing is there. */
export async function treeEntry(gitDir: string, commit: string, path: string): Promise<GitTreeEntry | null> {
  const slash = path.lastIndexOf('/');
  const parent = slash < 0 ? '' : path.slice(0, slash);
  const name = path.slice(slash + 1);
  const entries = await listTree(gitDir, commit, parent);
  return entries?.find((entry) => entry.name === name) ?? null;
}

/** A blob's bytes; callers bound the size first (`GitTreeEntry.size`). */
export async function readBlob(gitDir: string, sha: string, maxBytes: number): Promise<Buffer> {
  const { stdout } = await runGitBytes(['cat-file', 'blob', sha], { gitDir, maxOutputBytes: maxBytes });
  return stdout;
}

/** The first `bytes` bytes of a blob (the rest is never read into memory). */
export async function readBlobHead(gitDir: string, sha: string, bytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  const stream = streamBlob(gitDir, sha);
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= bytes) break;
  }
  return Buffer.concat(chunks).subarray(0, bytes);
}

/** A blob's bytes as a stream, for blobs too large to hold in memory. */
export function streamBlob(gitDir: string, sha: string): NodeJS.ReadableStream {
  return streamGit(['cat-file', 'blob', sha], { gitDir });
}

/** The URL `.gitmodules` of `commit` gives for the submodule at `path`, or null. */
export async function submoduleUrl(gitDir: string, commit: string, path: string): Promise<string | null> {
  const result = await runGit(['config', '-z', '--list', `--blob=${commit}:.gitmodules`], {
    gitDir,
    okExitCodes: [1, 128],
  });
  if (result.exitCode !== 0) return null;
  const values = new Map<string, string>();
  for (const item of result.stdout.split('\0')) {
    const newline = item.indexOf('\n');
    if (newline > 0) values.set(item.slice(0, newline), item.slice(newline + 1));
  }
  for (const [key, value] of values) {
    const match = /^submodule\.(.+)\.path$/.exec(key);
    if (match && value === path) return values.get(`submodule.${match[1]}.url`) ?? null;
  }
  return null;
}
