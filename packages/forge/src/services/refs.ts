/**
 * Which commit a caller's `ref` names (Gitea's utils.ResolveRefCommit): a branch first, then a tag, then
 * a commit id of at least seven hex digits. The kind decides the web links (`src/branch/…`, `src/tag/…`,
 * `src/commit/…`) the contents answers carry.
 */
import { listRefs, resolveCommit } from '../git/repository.js';
import { isValidRefPattern } from './commits.js';

/** A resolved ref: what the caller wrote, its kind and the commit it names. */
export interface RefCommit {
  kind: 'branch' | 'tag' | 'commit';
  /** The branch or tag name, or the full commit id. */
  name: string;
  /** The ref as given (the default branch's name when the caller gave none). */
  inputRef: string;
  commitSha: string;
}

const SHA_PREFIX = /^[0-9a-f]{7,40}$/;

/** Resolves `ref` in `gitDir`, or null when it names no branch, tag or commit. */
export async function resolveRef(gitDir: string, ref: string): Promise<RefCommit | null> {
  if (!isValidRefPattern(ref)) return null;
  const branch = await resolveCommit(gitDir, `refs/heads/${ref}`);
  if (branch) return { kind: 'branch', name: ref, inputRef: ref, commitSha: branch };
  const tag = await resolveCommit(gitDir, `refs/tags/${ref}`);
  if (tag) return { kind: 'tag', name: ref, inputRef: ref, commitSha: tag };
  if (SHA_PREFIX.test(ref)) {
    const commit = await resolveCommit(gitDir, ref);
    if (commit) return { kind: 'commit', name: commit, inputRef: ref, commitSha: commit };
  }
  return null;
}

/**
 * Splits `<ref>/<path>` as Gitea's RepoRefForAPI does for raw and media links: the shortest leading
 * segments naming a branch, else a tag, else a leading commit id; otherwise the whole text is a path on
 * the default branch.
 */
export async function splitRefAndPath(
  gitDir: string,
  text: string,
  defaultBranch: string,
): Promise<{ ref: RefCommit | null; path: string }> {
  const parts = text.split('/');
  // One ref listing, matched in memory: a deep path must not cost a git process per segment.
  const refs = await listRefs(gitDir);
  for (const prefix of ['refs/heads/', 'refs/tags/'] as const) {
    for (let i = 1; i <= parts.length; i++) {
      const name = parts.slice(0, i).join('/');
      if (!refs.has(`${prefix}${name}`)) continue;
      const sha = await resolveCommit(gitDir, `${prefix}${name}`);
      if (!sha) continue;
      const kind = prefix === 'refs/heads/' ? 'branch' : 'tag';
      return { ref: { kind, name, inputRef: name, commitSha: sha }, path: parts.slice(i).join('/') };
    }
  }
  const first = parts[0] ?? '';
  if (SHA_PREFIX.test(first)) {
    const commit = await resolveCommit(gitDir, first);
    if (commit) {
      return {
        ref: { kind: 'commit', name: commit, inputRef: first, commitSha: commit },
        path: parts.slice(1).join('/'),
      };
    }
  }
  return { ref: await resolveRef(gitDir, defaultBranch), path: text };
}
