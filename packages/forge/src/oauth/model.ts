import OAuth2Server from '@node-oauth/oauth2-server';
import { redirectUrisOf } from '../convert/oauth2.js';
import { avatarUrl } from '../convert/user.js';
import type { ServiceContext } from '../services/context.js';
import { clientSecretMatches, findClient } from '../services/oauth2-apps.js';
import {
  consumeCode,
  findCode,
  findGrantForToken,
  grantAndIssueCode,
  grantSubject,
  nextRefreshCounter,
  redeemRefreshCounter,
  revokeGrant,
  userGroups,
} from '../services/oauth2-grants.js';
import type { OAuth2ApplicationRow, UserRow } from '../store/schema.js';
import { apiScopeOfGrant, grantHasScope } from './scopes.js';
import type { SigningKey } from './signing-key.js';
import { signGrantToken, signIdToken, TokenKind, verifyGrantToken } from './tokens.js';

/**
 * The storage side of @node-oauth/oauth2-server: the library runs the protocol (request validation,
 * redirect-URI and PKCE checks, code single use, error responses); these functions keep its state in
 * forge's database through the services, and shape tokens as Gitea's JWTs.
 */

type Model = OAuth2Server.AuthorizationCodeModel & OAuth2Server.RefreshTokenModel;

/** The library's client object, carrying forge's application row. */
export interface ProviderClient extends OAuth2Server.Client {
  id: string;
  grants: string[];
  redirectUris: string[];
  app: OAuth2ApplicationRow;
}

/** The library's user object: the forge user, and the grant a token is issued under. */
interface ProviderUser {
  id: number;
  row: UserRow;
  grantId?: number;
  /** The refresh-token counter being redeemed. */
  counter?: number;
  /** The OIDC nonce of the authorization request (consent only). */
  nonce?: string;
}

const GRANTS = ['authorization_code', 'refresh_token'];

export function toProviderClient(app: OAuth2ApplicationRow): ProviderClient {
  return { id: app.client_id, grants: GRANTS, redirectUris: redirectUrisOf(app), app };
}

/**
 * Gitea's `ContainsRedirectURI`: exact match up to case and a trailing slash; for public clients an http
 * loopback URI matches on any port (RFC 8252 §7.3, native apps listen on an ephemeral port).
 */
export function containsRedirectUri(app: OAuth2ApplicationRow, redirectUri: string): boolean {
  const normal = (uri: string) => uri.toLowerCase().replace(/\/$/, '');
  const registered = redirectUrisOf(app).map(normal);
  if (registered.includes(normal(redirectUri))) return true;
  if (app.confidential_client === 1) return false;
  try {
    const url = new URL(redirectUri);
    if (url.protocol !== 'http:' || url.port === '') return false;
    if (!['127.0.0.1', '[::1]'].includes(url.hostname)) return false;
    url.port = '';
    return registered.includes(normal(url.href));
  } catch {
    return false;
  }
}

function scopeList(grantScope: string): string[] | undefined {
  const items = grantScope.split(' ').filter((item) => item !== '');
  return items.length ? items : undefined;
}

/** Accounts that may not sign in get no codes or tokens either. */
export function mayUseTokens(user: UserRow | null | undefined): user is UserRow {
  return !!user && user.is_active === 1 && user.prohibit_login === 0;
}

/** The model used at the authorization endpoint: the client is identified, not authenticated. */
export function authorizeModel(ctx: ServiceContext): Model {
  return {
    ...tokenModelStub,
    async getClient(clientId) {
      const app = await findClient(ctx, clientId);
      return app ? toProviderClient(app) : null;
    },
    async validateRedirectUri(redirectUri: string, client: OAuth2Server.Client) {
      return containsRedirectUri((client as ProviderClient).app, redirectUri);
    },
    async saveAuthorizationCode(code, client, user) {
      const provider = user as ProviderUser;
      await grantAndIssueCode(ctx, {
        user: provider.row,
        app: (client as ProviderClient).app,
        scope: (code.scope ?? []).join(' '),
        nonce: provider.nonce ?? '',
        code: code.authorizationCode,
        expiresAt: code.expiresAt,
        redirectUri: code.redirectUri,
        codeChallenge: code.codeChallenge ?? '',
        codeChallengeMethod: code.codeChallengeMethod ?? '',
      });
      return { ...code, client, user };
    },
  };
}

/** The library's models must offer these; forge never calls the library for them. */
const tokenModelStub = {
  // API requests are authenticated by src/auth/oauth2.ts, not by the library's authenticate().
  async getAccessToken() {
    return null;
  },
  async saveToken() {
    return null;
  },
  async getAuthorizationCode() {
    return null;
  },
  async saveAuthorizationCode() {
    return null;
  },
  async revokeAuthorizationCode() {
    return false;
  },
  async getRefreshToken() {
    return null;
  },
  async revokeToken() {
    return false;
  },
  async getClient() {
    return null;
  },
} satisfies Model;

/**
 * The model used at the token endpoint: confidential clients must authenticate with their secret.
 *
 * Long by design: the oauth2-server model is one object of callbacks sharing the signing key and config;
 * each callback is short.
 */
export function tokenModel(ctx: ServiceContext, key: SigningKey): Model {
  const { config } = ctx;
  const issueIdToken = async (
    client: ProviderClient,
    user: ProviderUser,
    grantId: number,
    expiresAt: number,
  ) => {
    const grant = await findGrantForToken(ctx, grantId);
    if (!grant || !grantHasScope(grant.scope, 'openid')) return undefined;
    const row = user.row;
    const claims: Record<string, unknown> = { iss: config.appUrl, aud: client.id, sub: String(row.id) };
    if (grant.nonce) claims.nonce = grant.nonce;
    if (grantHasScope(grant.scope, 'profile')) {
      Object.assign(claims, {
        name: row.full_name || row.name,
        preferred_username: row.name,
        profile: `${config.appUrl}${encodeURIComponent(row.name)}`,
        picture: avatarUrl(config, row),
        website: row.website || undefined,
        locale: row.language || undefined,
        updated_at: row.updated_unix,
      });
    }
    if (grantHasScope(grant.scope, 'email')) {
      Object.assign(claims, { email: row.email, email_verified: row.is_active === 1 });
    }
    if (grantHasScope(grant.scope, 'groups')) {
      claims.groups = await userGroups(ctx, row, apiScopeOfGrant(grant.scope).publicOnly);
    }
    return signIdToken(key, claims, expiresAt);
  };

  return {
    ...tokenModelStub,
    async getClient(clientId, clientSecret) {
      const app = await findClient(ctx, clientId);
      if (!app) return null;
      // RFC 6749 §2.3: a confidential client authenticates; a public client's secret, if sent, must match.
      if (app.confidential_client === 1 || clientSecret) {
        if (!clientSecret || !clientSecretMatches(app, clientSecret)) return null;
      }
      return toProviderClient(app);
    },

    async getAuthorizationCode(code) {
      const row = await findCode(ctx, code);
      if (!row) return null;
      const subject = await grantSubject(ctx, row.user_id);
      if (!mayUseTokens(subject)) return null;
      const user: ProviderUser = { id: subject.id, row: subject, grantId: row.grant_id };
      return {
        authorizationCode: code,
        expiresAt: new Date(row.valid_until * 1000),
        redirectUri: row.redirect_uri,
        scope: scopeList(row.scope),
        client: { id: row.client_id, grants: GRANTS },
        user,
        ...(row.code_challenge
          ? { codeChallenge: row.code_challenge, codeChallengeMethod: row.code_challenge_method }
          : {}),
      };
    },

    async revokeAuthorizationCode(code) {
      return consumeCode(ctx, code.authorizationCode);
    },

    async getRefreshToken(refreshToken) {
      const claims = await verifyGrantToken(key, refreshToken, TokenKind.Refresh);
      if (!claims) return null;
      const grant = await findGrantForToken(ctx, claims.grantId);
      if (!grant) return null;
      if (grant.counter !== claims.counter) {
        // A refresh token that was already redeemed is being replayed: someone else may hold it. Revoke the
        // whole grant so neither party keeps access (OAuth 2.0 Security BCP, refresh-token rotation).
        await revokeGrant(ctx, grant.id);
        return null;
      }
      const subject = await grantSubject(ctx, grant.user_id);
      if (!mayUseTokens(subject)) return null;
      const user: ProviderUser = { id: subject.id, row: subject, grantId: grant.id, counter: claims.counter };
      return {
        refreshToken,
        refreshTokenExpiresAt: new Date(claims.exp * 1000),
        scope: scopeList(grant.scope),
        client: { id: grant.client_id, grants: GRANTS },
        user,
      };
    },

    async revokeToken(token) {
      const user = token.user as ProviderUser;
      if (user.grantId === undefined || user.counter === undefined) return false;
      return redeemRefreshCounter(ctx, user.grantId, user.counter);
    },

    async generateAccessToken(_client, user) {
      const grantId = (user as ProviderUser).grantId;
      if (grantId === undefined) throw new OAuth2Server.ServerError('no grant');
      return signGrantToken(key, TokenKind.Access, grantId, accessExpiry(ctx));
    },

    async generateRefreshToken(_client, user) {
      const grantId = (user as ProviderUser).grantId;
      if (grantId === undefined) throw new OAuth2Server.ServerError('no grant');
      const counter = await nextRefreshCounter(ctx, grantId);
      if (counter === undefined)
        throw new OAuth2Server.InvalidGrantError('Invalid grant: the grant was revoked');
      const expiresAt = Math.floor(Date.now() / 1000) + config.oauth2.refreshTokenExpirationTime * 3600;
      return signGrantToken(key, TokenKind.Refresh, grantId, expiresAt, counter);
    },

    async saveToken(token, client, user) {
      const provider = user as ProviderUser;
      const idToken = await issueIdToken(
        client as ProviderClient,
        provider,
        provider.grantId!,
        accessExpiry(ctx),
      );
      // Only what the response needs: the library would echo any other key (e.g. the code) to the client.
      return {
        accessToken: token.accessToken,
        accessTokenExpiresAt: token.accessTokenExpiresAt,
        refreshToken: token.refreshToken,
        refreshTokenExpiresAt: token.refreshTokenExpiresAt,
        scope: token.scope,
        client,
        user,
        ...(idToken ? { id_token: idToken } : {}),
      };
    },
  };
}

function accessExpiry(ctx: ServiceContext): number {
  return Math.floor(Date.now() / 1000) + ctx.config.oauth2.accessTokenExpirationTime;
}
