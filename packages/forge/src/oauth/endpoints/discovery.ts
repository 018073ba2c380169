/** OpenID Connect discovery: the provider's configuration document and its signing keys (JWKS). */

import type { FastifyPluginAsync } from 'fastify';
import { OIDC_SCOPES } from '../scopes.js';
import { type OAuthEndpointOptions, web } from './options.js';

export const discoveryEndpoints: FastifyPluginAsync<OAuthEndpointOptions> = async (app, { ctx, key }) => {
  app.get('/.well-known/openid-configuration', web, async (_request, reply) => {
    const { config } = ctx;
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
};
