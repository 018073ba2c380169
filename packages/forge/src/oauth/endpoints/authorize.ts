/**
 * The authorization endpoint (`/login/oauth/authorize`) and the consent form it shows
 * (`/login/oauth/grant`): a checked request from a signed-in user gets a code through
 * @node-oauth/oauth2-server, at once for a client the user already trusts, otherwise after consent.
 */

import OAuth2Server from '@node-oauth/oauth2-server';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { applicationOwner } from '../../services/oauth2-apps.js';
import { userGrant } from '../../services/oauth2-grants.js';
import type { UserRow } from '../../store/schema.js';
import {
  type Checked,
  checkAuthorizeRequest,
  errorRedirect,
  sendChecked,
  sendPage,
} from '../authorize-request.js';
import { authorizeModel, mayUseTokens } from '../model.js';
import { consentPage, errorPage } from '../pages.js';
import { param } from '../request-parts.js';
import { sessionUser } from '../sessions.js';
import { type OAuthEndpointOptions, web } from './options.js';

/** Gitea's authorization-code lifetime. */
const CODE_LIFETIME = 10 * 60;

/** Issues a code through the library for a checked request and sends the redirect. */
async function issueCode(
  authorizer: OAuth2Server,
  reply: FastifyReply,
  checked: Extract<Checked, { kind: 'ok' }>,
  user: UserRow,
) {
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
}

export const authorizeEndpoints: FastifyPluginAsync<OAuthEndpointOptions> = async (app, { ctx, appPath }) => {
  // The authorization endpoint identifies the client without authenticating it: a model of its own.
  const authorizer = new OAuth2Server({ model: authorizeModel(ctx) });

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
      return issueCode(authorizer, reply, checked, user);
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
    return issueCode(authorizer, reply, checked, user);
  });
};
