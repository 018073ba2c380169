import { apiScopeOfGrant } from '../oauth/scopes.js';
import type { SigningKey } from '../oauth/signing-key.js';
import { TokenKind, verifyGrantToken } from '../oauth/tokens.js';
import type { ServiceContext } from '../services/context.js';
import { grantUser } from '../services/oauth2-grants.js';
import type { UserRow } from '../store/schema.js';
import type { TokenScope } from './scopes.js';

/** What an OAuth2 access token stands for on the API. */
export interface OAuthTokenHit {
  user: UserRow;
  /** Gitea's mapping of the grant's scopes onto personal-token scopes. */
  scope: TokenScope;
  scopeText: string;
  grantId: number;
  clientId: string;
}

/** Resolves an OAuth2 access token (a JWT) to its user and API scope, or null. */
export type OAuthTokenVerifier = (token: string) => Promise<OAuthTokenHit | null>;

/**
 * OAuth2 access tokens on the API, as Gitea's `userIDFromToken`: the JWT's signature (server key, its one
 * algorithm), expiry and kind are checked without the database; then its grant is read on every request,
 * with no cache, so deleting the application or revoking the grant takes effect at once.
 */
export function createOAuthTokenVerifier(ctx: ServiceContext, key: SigningKey): OAuthTokenVerifier {
  return async (token) => {
    const claims = await verifyGrantToken(key, token, TokenKind.Access);
    if (!claims) return null;
    const hit = await grantUser(ctx, claims.grantId);
    if (!hit) return null;
    const scope = apiScopeOfGrant(hit.scope);
    return {
      user: hit.user,
      scope,
      scopeText: scope.normalize(),
      grantId: claims.grantId,
      clientId: hit.clientId,
    };
  };
}

/** A presented token that can only be a JWT (personal tokens are 40 hex digits without dots). */
export function looksLikeJwt(token: string): boolean {
  return token.includes('.');
}
