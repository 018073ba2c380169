import { TokenScope } from '../auth/scopes.js';

/** The OpenID Connect scopes Gitea supports; they say what the ID token holds, not what the API allows. */
export const OIDC_SCOPES = ['openid', 'profile', 'email', 'groups'] as const;

const isOidcScope = (item: string) => (OIDC_SCOPES as readonly string[]).includes(item);

/**
 * Gitea's `GrantAdditionalScopes`: the API scope of an OAuth2 token is the grant's scopes minus the OIDC
 * ones, as a personal-token scope; without any such scope the token has full access (Gitea ≥ 1.22).
 * Unlike Gitea, an unparsable remainder grants nothing instead of everything (forge refuses such scopes
 * at authorization, so only a hand-edited grant can hold one).
 */
export function apiScopeOfGrant(grantScope: string): TokenScope {
  const additional = grantScope.split(' ').filter((item) => item !== '' && !isOidcScope(item));
  if (additional.length === 0) return TokenScope.parse('all');
  try {
    return TokenScope.parse(additional.join(','));
  } catch {
    return TokenScope.parse('');
  }
}

/** True when every requested scope is an OIDC scope or a personal-token scope forge knows. */
export function isValidRequestedScope(items: string[]): boolean {
  return items.every((item) => {
    if (isOidcScope(item)) return true;
    try {
      TokenScope.parse(item);
      return item !== '';
    } catch {
      return false;
    }
  });
}

/** True when the grant's scopes include `item` (space-separated, as stored). */
export function grantHasScope(grantScope: string, item: string): boolean {
  return grantScope.split(' ').includes(item);
}
