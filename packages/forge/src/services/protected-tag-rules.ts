/**
 * Gitea's protected-tag rules (models/git/protected_tag.go), free of storage: a pattern is either
 * `/regex/` (unanchored, like Go's MatchString) or a gobwas/glob pattern compiled without separators, so
 * `*` also matches `/`.
 */

/** One protection as the rules need it. */
export interface TagProtectionRule {
  namePattern: string;
  allowlistUserIds: readonly number[];
  allowlistTeamIds: readonly number[];
}

/** A pattern that neither compiles as a regular expression nor as a glob. */
export class InvalidTagPatternError extends Error {
  constructor(
    readonly pattern: string,
    reason: string,
  ) {
    super(`invalid tag protection pattern "${pattern}": ${reason}`);
    this.name = 'InvalidTagPatternError';
  }
}

const REGEX_SPECIALS = /[.*+?^${}()|[\]\\/]/g;

function escapeLiteral(text: string): string {
  return text.replace(REGEX_SPECIALS, '\\$&');
}

/** Translates a gobwas/glob pattern (no separators) to an anchored RegExp source. */
function globToRegexSource(pattern: string): string {
  let out = '';
  let braceDepth = 0;
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    switch (char) {
      case '\\': {
        const next = pattern[i + 1];
        if (next === undefined) throw new InvalidTagPatternError(pattern, 'trailing escape');
        out += escapeLiteral(next);
        i++;
        break;
      }
      case '*':
        // `**` (super-asterisk) and `*` are the same when there are no separators.
        while (pattern[i + 1] === '*') i++;
        out += '[\\s\\S]*';
        break;
      case '?':
        out += '[\\s\\S]';
        break;
      case '[': {
        const close = pattern.indexOf(']', i + 2);
        if (close < 0) throw new InvalidTagPatternError(pattern, 'unclosed character class');
        let body = pattern.slice(i + 1, close);
        const negated = body.startsWith('!');
        if (negated) body = body.slice(1);
        const ranged = body.replace(/\\(.)/g, '$1');
        const cls = [...ranged]
          .map((c, index, all) => (c === '-' && index > 0 && index < all.length - 1 ? '-' : escapeLiteral(c)))
          .join('');
        out += `[${negated ? '^' : ''}${cls}]`;
        i = close;
        break;
      }
      case '{':
        braceDepth++;
        out += '(?:';
        break;
      case '}':
        if (braceDepth === 0) throw new InvalidTagPatternError(pattern, 'unbalanced "}"');
        braceDepth--;
        out += ')';
        break;
      case ',':
        out += braceDepth > 0 ? '|' : ',';
        break;
      default:
        out += escapeLiteral(char);
    }
  }
  if (braceDepth !== 0) throw new InvalidTagPatternError(pattern, 'unclosed "{"');
  return `^(?:${out})$`;
}

/** Compiles a protection pattern into a predicate on tag names. */
export function compileTagPattern(pattern: string): (tagName: string) => boolean {
  if (pattern.length >= 2 && pattern.startsWith('/') && pattern.endsWith('/')) {
    let regex: RegExp;
    try {
      regex = new RegExp(pattern.slice(1, -1));
    } catch (error) {
      throw new InvalidTagPatternError(pattern, (error as Error).message);
    }
    return (name) => regex.test(name);
  }
  let glob: RegExp;
  try {
    glob = new RegExp(globToRegexSource(pattern));
  } catch (error) {
    if (error instanceof InvalidTagPatternError) throw error;
    throw new InvalidTagPatternError(pattern, (error as Error).message);
  }
  return (name) => glob.test(name);
}

/**
 * Gitea's IsUserAllowedToControlTag: with no matching protection anyone may; otherwise the caller must be
 * allowlisted (directly or through a team) by at least one matching protection. Site admins get no bypass.
 */
export function isUserAllowedToControlTag(
  rules: readonly TagProtectionRule[],
  tagName: string,
  user: { id: number; teamIds: readonly number[] },
): boolean {
  let allowed = true;
  for (const rule of rules) {
    if (!compileTagPattern(rule.namePattern)(tagName)) continue;
    allowed =
      rule.allowlistUserIds.includes(user.id) ||
      rule.allowlistTeamIds.some((team) => user.teamIds.includes(team));
    if (allowed) break;
  }
  return allowed;
}
