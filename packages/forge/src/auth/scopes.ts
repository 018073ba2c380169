import { LRUCache } from 'lru-cache';

/**
 * Access-token scopes exactly as Gitea's `models/auth/access_token_scope.go`: nine categories, `read:` and
 * `write:` levels (write implies read), `all` (every write) and the independent `public-only` flag.
 */
export const SCOPE_CATEGORIES = [
  'activitypub',
  'admin',
  'misc',
  'notification',
  'organization',
  'package',
  'issue',
  'repository',
  'user',
] as const;
export type ScopeCategory = (typeof SCOPE_CATEGORIES)[number];
export type ScopeLevel = 'read' | 'write';

const PUBLIC_ONLY = 'public-only';
const ALL = 'all';
/** The order Gitea's Normalize() emits scopes in. */
const CANONICAL_ORDER = [PUBLIC_ONLY, ...SCOPE_CATEGORIES.flatMap((c) => [`write:${c}`, `read:${c}`])];
const ALL_WRITES = SCOPE_CATEGORIES.map((c) => `write:${c}`).join(',');

// Tokens share few distinct scopes; the bound only keeps odd inputs from growing the memo.
const parsedScopes = new LRUCache<string, TokenScope>({ max: 256 });

/** A parsed scope: the granted level per category plus the public-only flag. */
export class TokenScope {
  private constructor(
    private readonly levels: ReadonlyMap<ScopeCategory, ScopeLevel>,
    readonly publicOnly: boolean,
  ) {}

  /**
   * Parses a comma-separated scope string; throws `invalid access token scope: X` on an unknown item.
   * Every token request parses its stored scope: parsed scopes are kept by their text (a pure function
   * of it, immutable), so a changed scope is a new text and never meets an old entry.
   */
  static parse(scope: string): TokenScope {
    let parsed = parsedScopes.get(scope);
    if (!parsed) {
      parsed = TokenScope.parseText(scope);
      parsedScopes.set(scope, parsed);
    }
    return parsed;
  }

  private static parseText(scope: string): TokenScope {
    const levels = new Map<ScopeCategory, ScopeLevel>();
    let publicOnly = false;
    const grant = (category: ScopeCategory, level: ScopeLevel) => {
      if (levels.get(category) !== 'write') levels.set(category, level);
    };
    for (const item of scope.split(',')) {
      if (item === '') continue;
      if (item === ALL) {
        for (const category of SCOPE_CATEGORIES) grant(category, 'write');
      } else if (item === PUBLIC_ONLY) {
        publicOnly = true;
      } else {
        const match = /^(read|write):(.+)$/.exec(item);
        const category = match?.[2] as ScopeCategory | undefined;
        if (!match || !category || !SCOPE_CATEGORIES.includes(category)) {
          throw new Error(`invalid access token scope: ${item}`);
        }
        grant(category, match[1] as ScopeLevel);
      }
    }
    return new TokenScope(levels, publicOnly);
  }

  /** True when the token grants `level` (or more) on `category`. */
  has(category: ScopeCategory, level: ScopeLevel): boolean {
    const granted = this.levels.get(category);
    return granted === 'write' || (granted === 'read' && level === 'read');
  }

  /** Gitea's canonical string: implied scopes dropped, nine writes collapsed into `all`. */
  normalize(): string {
    const items = CANONICAL_ORDER.filter((item) => {
      if (item === PUBLIC_ONLY) return this.publicOnly;
      const [level, category] = item.split(':') as [ScopeLevel, ScopeCategory];
      return this.levels.get(category) === level;
    });
    return items.join(',').replace(ALL_WRITES, ALL);
  }

  /** The normalised scope as a list, as the token API returns it. */
  toList(): string[] {
    const normalized = this.normalize();
    return normalized === '' ? [] : normalized.split(',');
  }
}

/** Required level for a request method: writes for POST/PUT/PATCH/DELETE, reads otherwise. */
export function levelForMethod(method: string): ScopeLevel {
  return ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method.toUpperCase()) ? 'write' : 'read';
}
