import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import fastifyFormbody from '@fastify/formbody';
import OAuth2Server from '@node-oauth/oauth2-server';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { OAuthTokenVerifier } from '../auth/oauth2.js';
import { avatarUrl } from '../convert/user.js';
import type { ServiceContext } from '../services/context.js';
import { applicationOwner, clientSecretMatches, findClient } from '../services/oauth2-apps.js';
import { findGrantForToken, grantUser, userGrant, userGroups } from '../services/oauth2-grants.js';
import { signInWithPassword } from '../services/users.js';
import type { OAuth2ApplicationRow, UserRow } from '../store/schema.js';
import { authorizeModel, containsRedirectUri, mayUseTokens, tokenModel } from './model.js';
import { consentPage, errorPage, PAGE_HEADERS, signInPage } from './pages.js';
import { isValidRequestedScope, OIDC_SCOPES } from './scopes.js';
import { sessionUser, startSession } from './sessions.js';
import type { SigningKey } from './signing-key.js';
import { TokenKind, verifyGrantToken } from './tokens.js';

export interface OAuthRouteOptions {
  ctx: ServiceContext;
  key: SigningKey;
  verifyAccessToken: OAuthTokenVerifier;
}

/** Gitea's authorization-code lifetime. */
const CODE_LIFETIME = 10 * 60;
/** Longest value accepted for any authorization or sign-in parameter. */
const MAX_PARAM = 2048;
const AUTHORIZE_PARAMS = [
  'client_id',
  'redirect_uri',
  'response_type',
  'state',
  'scope',
  'nonce',
  'code_challenge',
  'code_challenge_method',
] as const;
type AuthorizeParams = Record<(typeof AUTHORIZE_PARAMS)[number], string>;

/** A single string parameter of a query or form: '' when absent, null when repeated, oversized or not text. */
function param(source: unknown, name: string): string | null {
  const value = (source as Record<string, unknown> | undefined)?.[name];
  if (value === undefined) return '';
  if (typeof value !== 'string' || value.length > MAX_PARAM || value.includes('\u0000')) return null;
  return value;
}

type Checked =
  | { kind: 'ok'; app: OAuth2ApplicationRow; params: AuthorizeParams; scopes: string[] }
  | { kind: 'page'; status: number; title: string; description: string }
  | { kind: 'redirect'; location: string };

/** The error redirect of RFC 6749 §4.1.2.1, to a redirect URI already known to be registered. */
function errorRedirect(
  redirectUri: string,
  error: string,
  description: string,
  state: string,
): Extract<Checked, { kind: 'redirect' }> {
  const url = new URL(redirectUri);
  url.searchParams.set('error', error);
  url.searchParams.set('error_description', description);
  url.searchParams.set('state', state);
  return { kind: 'redirect', location: url.href };
}

/**
 * Gitea's checks of an authorization request (`AuthorizeOAuth`), in its order: unknown client or
 * unregistered redirect URI are shown as a page (the redirect URI cannot be trusted); everything else is
 * reported to the client's redirect URI. Public clients must use PKCE, and only S256.
 */
async function checkAuthorizeRequest(ctx: ServiceContext, source: unknown): Promise<Checked> {
  const params = {} as AuthorizeParams;
  for (const name of AUTHORIZE_PARAMS) {
    const value = param(source, name);
    if (value === null) {
      return {
        kind: 'page',
        status: 400,
        title: 'Invalid request',
        description: `invalid parameter: ${name}`,
      };
    }
    params[name] = value;
  }
  const app = await findClient(ctx, params.client_id);
  if (!app)
    return {
      kind: 'page',
      status: 400,
      title: 'Unauthorized client',
      description: 'Client ID not registered',
    };
  if (!params.redirect_uri || !containsRedirectUri(app, params.redirect_uri)) {
    return { kind: 'page', status: 400, title: 'Invalid request', description: 'Unregistered Redirect URI' };
  }
  const fail = (error: string, description: string) =>
    errorRedirect(params.redirect_uri, error, description, params.state);
  if (params.response_type !== 'code') {
    return fail('unsupported_response_type', 'Only code response type is supported.');
  }
  if (params.code_challenge_method !== '' && params.code_challenge_method !== 'S256') {
    return fail('invalid_request', 'unsupported code challenge method');
  }
  if (params.code_challenge === '') {
    if (app.confidential_client !== 1) return fail('invalid_request', 'PKCE is required for public clients');
    if (params.code_challenge_method !== '') return fail('invalid_request', 'code_challenge is required');
  }
  const scopes = params.scope.split(' ').filter((item) => item !== '');
  if (!isValidRequestedScope(scopes)) return fail('invalid_scope', 'unknown scope requested');
  return { kind: 'ok', app, params, scopes };
}

/** A local path to return to after sign-in; anything else (other hosts, `//x`, `/\x`) becomes the root. */
function safeRedirectTarget(value: string | null, fallback: string): string {
  if (!value?.startsWith('/') || value.startsWith('//') || value.includes('\\')) return fallback;
  if ([...value].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) return fallback;
  return value;
}

function sendPage(reply: FastifyReply, status: number, html: string) {
  return reply.code(status).headers(PAGE_HEADERS).send(html);
}

function sendChecked(reply: FastifyReply, checked: Exclude<Checked, { kind: 'ok' }>) {
  if (checked.kind === 'redirect') return reply.code(303).header('location', checked.location).send();
  return sendPage(reply, checked.status, errorPage(checked.title, checked.description));
}

/** The `token|bearer <t>` of an Authorization header, or null. */
function bearerToken(request: FastifyRequest): string | null {
  const fields = (request.headers.authorization ?? '').trim().split(/\s+/);
  return fields.length === 2 && /^(token|bearer)$/i.test(fields[0]!) ? fields[1]! : null;
}

/** `client_id:client_secret` of an Authorization: Basic header, or null. */
function basicClient(request: FastifyRequest): { id: string; secret: string } | null {
  const fields = (request.headers.authorization ?? '').trim().split(/\s+/);
  if (fields.length !== 2 || fields[0]!.toLowerCase() !== 'basic') return null;
  const decoded = Buffer.from(fields[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  // RFC 6749 §2.3.1: both parts are form-urlencoded inside the Basic credentials.
  try {
    return {
      id: decodeURIComponent(decoded.slice(0, colon).replaceAll('+', ' ')),
      secret: decodeURIComponent(decoded.slice(colon + 1).replaceAll('+', ' ')),
    };
  } catch {
    return null;
  }
}

/**
 * The OAuth2 / OpenID Connect provider at Gitea's paths. @node-oauth/oauth2-server runs the protocol at
 * the authorization and token endpoints; jose signs and verifies the JWTs. The sign-in and consent pages
 * are forms protected by @fastify/csrf-protection; their session never authenticates the API.
 */
export const oauthRoutes: FastifyPluginAsync<OAuthRouteOptions> = async (
  app,
  { ctx, key, verifyAccessToken },
) => {
  const { config } = ctx;
  const secureCookies = config.appUrl.startsWith('https:');
  await app.register(fastifyFormbody, { bodyLimit: 64 * 1024 });
  await app.register(fastifyCookie);
  await app.register(fastifyCsrf, {
    cookieOpts: { path: '/', sameSite: 'strict', httpOnly: true, secure: secureCookies },
    getToken: (request) => param(request.body, '_csrf') ?? undefined,
  });
  // Provider pages render their failures as pages, not as API error bodies.
  app.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
    const status = error.statusCode && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error({ err: error }, 'oauth2 provider error');
    const description =
      status === 403
        ? 'The form has expired or was not sent by this site; go back and try again.'
        : status === 500
          ? 'A server error occurred.'
          : error.message;
    return sendPage(reply, status, errorPage(status === 403 ? 'Invalid form' : 'Error', description));
  });

  const provider = new OAuth2Server({
    model: tokenModel(ctx, key),
    accessTokenLifetime: config.oauth2.accessTokenExpirationTime,
    refreshTokenLifetime: config.oauth2.refreshTokenExpirationTime * 3600,
    allowExtendedTokenAttributes: true,
    alwaysIssueNewRefreshToken: true,
    // Client authentication is decided per client in the model: confidential clients need their secret,
    // public ones (PKCE) do not.
    requireClientAuthentication: { authorization_code: false, refresh_token: false },
  });
  // The authorization endpoint identifies the client without authenticating it: a model of its own.
  const authorizer = new OAuth2Server({ model: authorizeModel(ctx) });
  const appPath = new URL(config.appUrl).pathname;
  // The API's auth chain (tokens, Basic as a user) must not run here: Basic carries client credentials.
  const web = { config: { skipApiAuth: true } };

  /** Issues a code through the library for a checked request and sends the redirect. */
  const issueCode = async (reply: FastifyReply, checked: Extract<Checked, { kind: 'ok' }>, user: UserRow) => {
    const { params } = checked;
    const body: Record<string, string> = {
      client_id: params.client_id,
      redirect_uri: params.redirect_uri,
      response_type: 'code',
      state: params.state,
    };
    if (params.scope.trim() !== '') body.scope = checked.scopes.join(' ');
    if (params.code_challenge !== '') {
      body.code_challenge = params.code_challenge;
      body.code_challenge_method = params.code_challenge_method || 'S256';
    }
    const oauthRequest = new OAuth2Server.Request({ method: 'POST', headers: {}, query: {}, body });
    const oauthResponse = new OAuth2Server.Response();
    try {
      await authorizer.authorize(oauthRequest, oauthResponse, {
        authenticateHandler: { handle: () => ({ id: user.id, row: user, nonce: params.nonce }) },
        allowEmptyState: true,
        authorizationCodeLifetime: CODE_LIFETIME,
      });
    } catch (error) {
      if (!oauthResponse.headers?.location) throw error;
    }
    return reply
      .code(303)
      .header('cache-control', 'no-store')
      .header('location', oauthResponse.headers!.location)
      .send();
  };

  app.get('/.well-known/openid-configuration', web, async (_request, reply) => {
    const base = config.appUrl.replace(/\/$/, '');
    return reply.header('cache-control', 'public, max-age=3600').send({
      issuer: config.appUrl,
      authorization_endpoint: `${base}/login/oauth/authorize`,
      token_endpoint: `${base}/login/oauth/access_token`,
      jwks_uri: `${base}/login/oauth/keys`,
      userinfo_endpoint: `${base}/login/oauth/userinfo`,
      introspection_endpoint: `${base}/login/oauth/introspect`,
      response_types_supported: ['code'],
      id_token_signing_alg_values_supported: [key.alg],
      subject_types_supported: ['public'],
      scopes_supported: [...OIDC_SCOPES],
      claims_supported: [
        'aud',
        'exp',
        'iat',
        'iss',
        'sub',
        'name',
        'preferred_username',
        'profile',
        'picture',
        'website',
        'locale',
        'updated_at',
        'email',
        'email_verified',
        'groups',
      ],
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      introspection_endpoint_auth_methods_supported: ['client_secret_basic'],
    });
  });

  app.get('/login/oauth/keys', web, async (_request, reply) => {
    return reply.header('cache-control', 'public, max-age=3600').send({ keys: [key.publicJwk] });
  });

  app.get('/user/login', web, async (request, reply) => {
    const redirectTo = safeRedirectTarget(param(request.query, 'redirect_to'), appPath);
    return sendPage(
      reply,
      200,
      signInPage({ action: `${appPath}user/login`, csrf: reply.generateCsrf(), redirectTo }),
    );
  });

  app.post('/user/login', { ...web, preHandler: app.csrfProtection }, async (request, reply) => {
    const redirectTo = safeRedirectTarget(param(request.body, 'redirect_to'), appPath);
    const username = param(request.body, 'user_name') ?? '';
    const password = param(request.body, 'password') ?? '';
    const again = (error: string) =>
      sendPage(
        reply,
        200,
        signInPage({
          action: `${appPath}user/login`,
          csrf: reply.generateCsrf(),
          redirectTo,
          username,
          error,
        }),
      );
    const user = username && password ? await signInWithPassword(ctx, username, password) : null;
    if (!user) return again('Username or password is incorrect.');
    if (!user.is_active || user.prohibit_login) {
      return again('This account is prohibited from signing in, please contact your site administrator.');
    }
    if (user.must_change_password) return again('You must change your password before signing in here.');
    await startSession(ctx, reply, user);
    return reply.code(303).header('location', redirectTo).send();
  });

  app.get('/login/oauth/authorize', web, async (request, reply) => {
    const checked = await checkAuthorizeRequest(ctx, request.query);
    if (checked.kind !== 'ok') return sendChecked(reply, checked);
    const user = await sessionUser(ctx, request);
    if (!mayUseTokens(user)) {
      return reply
        .code(303)
        .header('location', `${appPath}user/login?redirect_to=${encodeURIComponent(request.url)}`)
        .send();
    }
    // Gitea: a confidential or trusted client the user already authorized gets its code without asking
    // again; an untrusted public client always asks (RFC 6749 §10.2).
    const grant = await userGrant(ctx, user, checked.app);
    if (grant && (checked.app.confidential_client === 1 || checked.app.skip_secondary_authorization === 1)) {
      return issueCode(reply, checked, user);
    }
    const owner = await applicationOwner(ctx, checked.app);
    return sendPage(
      reply,
      200,
      consentPage({
        action: `${appPath}login/oauth/grant`,
        csrf: reply.generateCsrf(),
        userName: user.name,
        applicationName: checked.app.name,
        ownerName: owner?.name ?? 'a deleted user',
        redirectUri: checked.params.redirect_uri,
        scopes: checked.scopes,
        fields: checked.params,
      }),
    );
  });

  app.post('/login/oauth/grant', { ...web, preHandler: app.csrfProtection }, async (request, reply) => {
    const user = await sessionUser(ctx, request);
    if (!mayUseTokens(user)) {
      return sendPage(
        reply,
        401,
        errorPage('Not signed in', 'Your session has ended; sign in and try again.'),
      );
    }
    const checked = await checkAuthorizeRequest(ctx, request.body);
    if (checked.kind !== 'ok') return sendChecked(reply, checked);
    if (param(request.body, 'granted') !== 'true') {
      return sendChecked(
        reply,
        errorRedirect(
          checked.params.redirect_uri,
          'access_denied',
          'the request is denied',
          checked.params.state,
        ),
      );
    }
    return issueCode(reply, checked, user);
  });

  app.post('/login/oauth/access_token', web, async (request, reply) => {
    const body = { ...((request.body as Record<string, unknown> | undefined) ?? {}) };
    const headers = { ...request.headers } as Record<string, string>;
    const basic = basicClient(request);
    if (basic) {
      // Gitea: client_id/client_secret in the body must agree with the Basic credentials.
      const mismatch = (field: string, value: string) => body[field] !== undefined && body[field] !== value;
      if (mismatch('client_id', basic.id) || mismatch('client_secret', basic.secret)) {
        return reply.code(400).header('cache-control', 'no-store').send({
          error: 'invalid_request',
          error_description:
            'client credentials in the request body are inconsistent with the Authorization header',
        });
      }
      // RFC 6749 §2.3.1 form-encodes both parts inside Basic; the library reads them raw, so hand it the
      // decoded values (client ids and secrets never contain a colon).
      headers.authorization = `Basic ${Buffer.from(`${basic.id}:${basic.secret}`).toString('base64')}`;
    }
    const oauthRequest = new OAuth2Server.Request({ method: request.method, headers, query: {}, body });
    const oauthResponse = new OAuth2Server.Response();
    try {
      await provider.token(oauthRequest, oauthResponse);
    } catch {
      // The library has written the RFC 6749 §5.2 error into the response.
    }
    const result = oauthResponse.body as Record<string, unknown>;
    // Gitea answers the configured lifetime; the library derives it from the expiry, a second short.
    if (typeof result?.access_token === 'string') result.expires_in = config.oauth2.accessTokenExpirationTime;
    return reply
      .code(oauthResponse.status ?? 500)
      .headers({ ...oauthResponse.headers, 'cache-control': 'no-store', pragma: 'no-cache' })
      .send(result);
  });

  const userinfo = async (request: FastifyRequest, reply: FastifyReply) => {
    const token = bearerToken(request);
    const hit = token ? await verifyAccessToken(token) : null;
    if (!hit || !mayUseTokens(hit.user)) {
      return reply
        .code(401)
        .header('www-authenticate', 'Bearer realm="forge OAuth2"')
        .type('text/plain; charset=utf-8')
        .send('no valid authorization');
    }
    const user = hit.user;
    return reply.header('cache-control', 'no-store').send({
      sub: String(user.id),
      name: user.full_name || user.name,
      preferred_username: user.name,
      email: user.email,
      picture: avatarUrl(config, user),
      groups: await userGroups(ctx, user, hit.scope.publicOnly),
    });
  };
  app.get('/login/oauth/userinfo', web, userinfo);
  app.post('/login/oauth/userinfo', web, userinfo);

  app.post('/login/oauth/introspect', web, async (request, reply) => {
    const credentials = basicClient(request);
    const client = credentials ? await findClient(ctx, credentials.id) : undefined;
    if (!credentials || !client || !clientSecretMatches(client, credentials.secret)) {
      return reply
        .code(401)
        .header('www-authenticate', 'Basic realm="forge OAuth2"')
        .type('text/plain; charset=utf-8')
        .send('no valid authorization');
    }
    const token = param(request.body, 'token') ?? '';
    const inactive = { active: false };
    const access = await verifyGrantToken(key, token, TokenKind.Access);
    const refresh = access ? null : await verifyGrantToken(key, token, TokenKind.Refresh);
    const claims = access ?? refresh;
    if (!claims) return reply.header('cache-control', 'no-store').send(inactive);
    const [holder, grant] = await Promise.all([
      grantUser(ctx, claims.grantId),
      findGrantForToken(ctx, claims.grantId),
    ]);
    // Only the client a token was issued to learns about it (RFC 7662 §4); a redeemed refresh token is dead.
    const isRefresh = refresh !== null;
    if (
      !holder ||
      !grant ||
      holder.clientId !== client.client_id ||
      (isRefresh && grant.counter !== claims.counter)
    ) {
      return reply.header('cache-control', 'no-store').send(inactive);
    }
    return reply.header('cache-control', 'no-store').send({
      active: true,
      scope: holder.scope,
      username: holder.user.name,
      iss: config.appUrl,
      sub: String(holder.user.id),
      aud: [holder.clientId],
      exp: claims.exp,
    });
  });
};
