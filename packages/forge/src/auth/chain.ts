import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ReadView } from '../cache/read-view.js';
import { isCleanText } from '../clean-text.js';
import { ForbiddenBare, NotFound, Unauthorized } from '../errors.js';
import type { ServiceContext } from '../services/context.js';
import { resolveAccessToken } from '../services/tokens.js';
import { passwordChangeHint, signInWithPassword } from '../services/users.js';
import type { UserRow } from '../store/schema.js';
import type { TokenCredential } from '../store/tokens.js';
import { findUserByLowerName } from '../store/users.js';
import { ANONYMOUS, type AuthInfo, type PathUser, type SignatureVerifier } from './context.js';
import { looksLikeJwt, type OAuthTokenHit, type OAuthTokenVerifier } from './oauth2.js';
import { TokenScope } from './scopes.js';

const QUERY_TOKEN_WARNING =
  'token and access_token API authentication is deprecated and will be removed in gitea 1.23. Please use AuthorizationHeaderToken instead. Existing queries will continue to work but without authorization.';

/** Gitea's error for an unknown token or user name. */
const unknownUser = (name = '') => new Unauthorized(`user does not exist [uid: 0, name: ${name}]`);

type Query = Record<string, string | string[] | undefined>;

function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The token from `?token=`/`?access_token=` (unless disabled) or `Authorization: token|bearer <t>`. */
function presentedToken(request: FastifyRequest, reply: FastifyReply, ctx: ServiceContext): string | null {
  const query = request.query as Query;
  const fromQuery = firstValue(query.token) || firstValue(query.access_token);
  if (fromQuery) reply.header('X-Gitea-Warning', QUERY_TOKEN_WARNING);
  if (fromQuery && !ctx.config.security.disableQueryAuthToken) return fromQuery;
  const fields = (request.headers.authorization ?? '').trim().split(/\s+/);
  if (fields.length === 2 && /^(token|bearer)$/i.test(fields[0]!)) return fields[1]!;
  return null;
}

/** `user:password` from an `Authorization: Basic …` header, or null. */
function basicCredentials(request: FastifyRequest): { username: string; password: string } | null {
  const fields = (request.headers.authorization ?? '').trim().split(/\s+/);
  if (fields.length !== 2 || fields[0]!.toLowerCase() !== 'basic') return null;
  const decoded = Buffer.from(fields[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

function tokenAuth(
  hit: { token: TokenCredential; user: UserRow; repositories?: ReadonlySet<number> },
  isBasic: boolean,
): AuthInfo {
  const scope = TokenScope.parse(hit.token.scope);
  const repositories = hit.token.repo_scoped === 1 ? (hit.repositories ?? new Set<number>()) : null;
  return {
    // A repository-scoped token never carries site-administrator powers (and so cannot Sudo).
    user: repositories && hit.user.is_admin ? { ...hit.user, is_admin: 0 } : hit.user,
    method: isBasic ? 'basic-token' : 'token',
    scope,
    scopeText: hit.token.scope,
    publicOnly: scope.publicOnly,
    isBasic,
    repositories,
  };
}

function oauthAuth(hit: OAuthTokenHit, isBasic: boolean): AuthInfo {
  return {
    user: hit.user,
    method: 'oauth2',
    scope: hit.scope,
    scopeText: hit.scopeText,
    publicOnly: hit.scope.publicOnly,
    isBasic,
    repositories: null,
  };
}

/** A token as Gitea's OAuth2 method resolves it: a JWT is an OAuth2 access token, anything else a personal token. */
async function resolveToken(
  ctx: ServiceContext,
  token: string,
  isBasic: boolean,
  oauthVerifier: OAuthTokenVerifier | undefined,
  pathUser: PathUser | undefined,
  view: ReadView | undefined,
): Promise<AuthInfo | null> {
  if (looksLikeJwt(token)) {
    const hit = oauthVerifier ? await oauthVerifier(token) : null;
    return hit ? oauthAuth(hit, isBasic) : null;
  }
  const hit = await resolveAccessToken(ctx, token, pathUser, view);
  return hit ? tokenAuth(hit, isBasic) : null;
}

/**
 * Gitea's API auth group in order: access token (query or header), HTTP signature, Basic (token as
 * password or user name, then password sign-in). The first method yielding a user wins; when none does
 * and a credential was presented, the first failure is a 401, even on public routes.
 */
export async function authenticate(
  ctx: ServiceContext,
  request: FastifyRequest,
  reply: FastifyReply,
  signatureVerifier?: SignatureVerifier,
  oauthVerifier?: OAuthTokenVerifier,
): Promise<AuthInfo> {
  let failure: Unauthorized | null = null;
  const token = presentedToken(request, reply, ctx);
  if (token !== null) {
    // Text that cannot be a token never reaches the database (PostgreSQL refuses NUL outright).
    const auth = isCleanText(token)
      ? await resolveToken(ctx, token, false, oauthVerifier, request.pathUser, request.readView)
      : null;
    if (auth) return auth;
    failure = unknownUser();
  }
  if (signatureVerifier && request.headers.signature !== undefined) {
    const user = await signatureVerifier(request);
    if (user) return { ...ANONYMOUS, user, method: 'signature' };
  }
  const basic = basicCredentials(request);
  if (basic && !(isCleanText(basic.username) && isCleanText(basic.password))) {
    failure ??= unknownUser();
  } else if (basic) {
    const passwordIsToken = basic.password === '' || basic.password === 'x-oauth-basic';
    const auth = await resolveToken(
      ctx,
      passwordIsToken ? basic.username : basic.password,
      true,
      oauthVerifier,
      request.pathUser,
      request.readView,
    );
    if (auth) return auth;
    const user = passwordIsToken ? null : await signInWithPassword(ctx, basic.username, basic.password);
    if (user) return { ...ANONYMOUS, user, method: 'password', isBasic: true };
    failure ??= unknownUser(passwordIsToken ? '' : basic.username);
  }
  if (failure) throw failure;
  return ANONYMOUS;
}

/** Gitea's `verifyAuthWithOptions`: account states that may not use the API, as bare 403 bodies. */
export function assertAccountMayUseApi(ctx: ServiceContext, auth: AuthInfo): void {
  const user = auth.user;
  if (!user) {
    if (ctx.config.service.requireSignInView)
      throw new ForbiddenBare('Only signed in user is allowed to call APIs.');
    return;
  }
  if (!user.is_active && ctx.config.service.registerEmailConfirm) {
    throw new ForbiddenBare('This account is not activated.');
  }
  if (!user.is_active || user.prohibit_login) {
    throw new ForbiddenBare(
      'This account is prohibited from signing in, please contact your site administrator.',
    );
  }
  if (user.must_change_password) {
    // Gitea points to its web settings page; forge has none, so the message names what works here.
    throw new ForbiddenBare(passwordChangeHint(ctx, user.name));
  }
}

/** Gitea's `sudo()`: a site admin may act as another user via `?sudo=` or the `Sudo` header. */
export async function applySudo(
  ctx: ServiceContext,
  request: FastifyRequest,
  auth: AuthInfo,
): Promise<AuthInfo> {
  const header = request.headers.sudo;
  const name = firstValue((request.query as Query).sudo) || (Array.isArray(header) ? header[0] : header);
  if (!name) return auth;
  if (!auth.user?.is_admin) throw new ForbiddenBare('Only administrators allowed to sudo.');
  const target = isCleanText(name) ? await findUserByLowerName(ctx.db, name.toLowerCase()) : undefined;
  if (!target) throw new NotFound();
  return { ...auth, user: target };
}
