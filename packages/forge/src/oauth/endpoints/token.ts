/**
 * The token endpoint (`/login/oauth/access_token`): @node-oauth/oauth2-server runs the
 * authorization-code and refresh-token grants against the model (model.ts); the answer is its RFC 6749
 * body with Gitea's `expires_in`.
 */

import OAuth2Server from '@node-oauth/oauth2-server';
import type { FastifyPluginAsync } from 'fastify';
import { tokenModel } from '../model.js';
import { basicClient } from '../request-parts.js';
import { type OAuthEndpointOptions, web } from './options.js';

export const tokenEndpoint: FastifyPluginAsync<OAuthEndpointOptions> = async (app, { ctx, key }) => {
  const { config } = ctx;
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
};
