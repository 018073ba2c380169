/**
 * Paths inside a repository's tree, as the contents and commits routes take them from callers. Gitea
 * cleans a path (`path.Clean("/"+p)`) and refuses `.git` components in writes; the forge is stricter and
 * refuses `..` outright rather than silently resolving it, so a traversal attempt never names a different
 * file than the caller wrote. A NUL byte can never be part of a git path.
 */

/** Why a path was refused, quoted in Gitea's ErrFilenameInvalid message. */
export class MalformedTreePath extends Error {
  constructor(readonly path: string) {
    super(`path contains a malformed path component [path: ${path}]`);
    this.name = 'MalformedTreePath';
  }
}

/** Longest path accepted (git itself has no limit; file systems and Gitea's MaxSize(500) do). */
export const MAX_TREE_PATH = 4096;

/**
 * The canonical form of a caller's tree path: no leading, trailing or doubled slashes, no `.` segments.
 * Throws MalformedTreePath for `..` segments, NUL and other control bytes, over-long paths and, when
 * `forWrite`, any `.git` component (git refuses to check such paths out).
 */
export function cleanTreePath(raw: string, forWrite: boolean): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control bytes are exactly what is refused.
  if (raw.length > MAX_TREE_PATH || /[\u0000-\u001f\u007f]/.test(raw)) throw new MalformedTreePath(raw);
  const segments = raw.split('/').filter((segment) => segment !== '' && segment !== '.');
  for (const segment of segments) {
    if (segment === '..') throw new MalformedTreePath(raw);
    if (forWrite && segment.toLowerCase() === '.git') throw new MalformedTreePath(raw);
  }
  return segments.join('/');
}
