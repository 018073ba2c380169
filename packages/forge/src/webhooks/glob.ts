/**
 * The glob dialect Gitea compiles branch filters and host patterns with (github.com/gobwas/glob
 * without separators): `*` and `**` match any run of characters (slashes included), `?` one character,
 * `[abc]` / `[a-z]` / `[!abc]` a class, `{a,b}` alternatives (nestable), `\` escapes the next character.
 * Compiled to an anchored regular expression; null when the pattern is malformed.
 */
export function compileGlob(pattern: string): RegExp | null {
  let out = '';
  let depth = 0;
  for (let i = 0; i < pattern.length; i += 1) {
    const char = pattern[i]!;
    switch (char) {
      case '\\': {
        const next = pattern[i + 1];
        if (next === undefined) return null;
        out += escapeRegExp(next);
        i += 1;
        break;
      }
      case '*':
        out += '[\\s\\S]*';
        while (pattern[i + 1] === '*') i += 1;
        break;
      case '?':
        out += '[\\s\\S]';
        break;
      case '[': {
        const end = pattern.indexOf(']', i + 2);
        if (end < 0) return null;
        let body = pattern.slice(i + 1, end);
        const negated = body.startsWith('!');
        if (negated) body = body.slice(1);
        if (body === '') return null;
        out += `[${negated ? '^' : ''}${body.replace(/[\\\]^]/g, '\\$&')}]`;
        i = end;
        break;
      }
      case '{':
        depth += 1;
        out += '(?:';
        break;
      case '}':
        if (depth === 0) return null;
        depth -= 1;
        out += ')';
        break;
      case ',':
        out += depth > 0 ? '|' : ',';
        break;
      default:
        out += escapeRegExp(char);
    }
  }
  if (depth !== 0) return null;
  try {
    return new RegExp(`^${out}$`, 'u');
  } catch {
    return null;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/**
 * Gitea's branch filter rule (services/webhook): empty, `*` or `**` lets everything through; otherwise a
 * branch ref matches by its short name or its full ref, any other ref (tags) by its full ref.
 */
export function branchFilterMatches(filter: string, ref: string): boolean {
  if (filter === '' || filter === '*' || filter === '**') return true;
  const glob = compileGlob(filter);
  if (!glob) return false;
  if (ref.startsWith('refs/heads/') && glob.test(ref.slice('refs/heads/'.length))) return true;
  return glob.test(ref);
}
