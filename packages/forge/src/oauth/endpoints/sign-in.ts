/**
 * The sign-in form (`/user/login`) the authorization endpoint sends a visitor to; a successful sign-in
 * starts a provider session (sessions.ts) that never authenticates the API.
 */

import type { FastifyPluginAsync } from 'fastify';
import { signInWithPassword } from '../../services/users.js';
import { sendPage } from '../authorize-request.js';
import { signInPage } from '../pages.js';
import { param, safeRedirectTarget } from '../request-parts.js';
import { startSession } from '../sessions.js';
import { type OAuthEndpointOptions, web } from './options.js';

export const signInEndpoints: FastifyPluginAsync<OAuthEndpointOptions> = async (app, { ctx, appPath }) => {
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
};
