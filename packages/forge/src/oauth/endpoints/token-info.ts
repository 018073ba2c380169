/**
 * What a token says: the OpenID Connect userinfo endpoint (for the token's holder) and RFC 7662
 * introspection (for the client the token was issued to, authenticated with its secret).
 */

import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { avatarUrl } from '../../convert/user.js';
import { clientSecretMatches, findClient } from '../../services/oauth2-apps.js';
import { findGrantForToken, grantUser, userGroups } from '../../services/oauth2-grants.js';
import { mayUseTokens } from '../model.js';
import { basicClient, bearerToken, param } from '../request-parts.js';
import { TokenKind, verifyGrantToken } from '../tokens.js';
import { type OAuthEndpointOptions, web } from './options.js';

export const tokenInfoEndpoints: FastifyPluginAsync<OAuthEndpointOptions> = async (
  app,
  { ctx, key, verifyAccessToken },
) => {
  const { config } = ctx;
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
