/**
 * The OAuth2 / OpenID Connect provider at Gitea's paths, one module per endpoint under endpoints/:
 * discovery (configuration, keys), sign-in, authorize and consent, token, and token info (userinfo,
 * introspection). @node-oauth/oauth2-server runs the protocol at the authorization and token endpoints;
 * jose signs and verifies the JWTs. This plugin sets up what the endpoints share: form bodies, cookies,
 * @fastify/csrf-protection of the sign-in and consent forms (whose session never authenticates the API),
 * and failures rendered as pages.
 */

import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import fastifyFormbody from '@fastify/formbody';
import type { FastifyPluginAsync } from 'fastify';
import type { OAuthTokenVerifier } from '../auth/oauth2.js';
import type { ServiceContext } from '../services/context.js';
import { sendPage } from './authorize-request.js';
import { authorizeEndpoints } from './endpoints/authorize.js';
import { discoveryEndpoints } from './endpoints/discovery.js';
import { signInEndpoints } from './endpoints/sign-in.js';
import { tokenEndpoint } from './endpoints/token.js';
import { tokenInfoEndpoints } from './endpoints/token-info.js';
import { errorPage } from './pages.js';
import { param } from './request-parts.js';
import type { SigningKey } from './signing-key.js';

export interface OAuthRouteOptions {
  ctx: ServiceContext;
  key: SigningKey;
  verifyAccessToken: OAuthTokenVerifier;
}

/** The provider's plugin: what the endpoints share, then the endpoints in Gitea's order. */
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

  const endpoints = { ctx, key, verifyAccessToken, appPath: new URL(config.appUrl).pathname };
  await app.register(discoveryEndpoints, endpoints);
  await app.register(signInEndpoints, endpoints);
  await app.register(authorizeEndpoints, endpoints);
  await app.register(tokenEndpoint, endpoints);
  await app.register(tokenInfoEndpoints, endpoints);
};
