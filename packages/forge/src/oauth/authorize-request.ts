/**
 * An authorization request (`/login/oauth/authorize` and the consent form's `/login/oauth/grant`): its
 * parameters, Gitea's checks in Gitea's order, and how a refused one is answered.
 */

import type { FastifyReply } from 'fastify';
import type { ServiceContext } from '../services/context.js';
import { findClient } from '../services/oauth2-apps.js';
import type { OAuth2ApplicationRow } from '../store/schema.js';
import { containsRedirectUri } from './model.js';
import { errorPage, PAGE_HEADERS } from './pages.js';
import { param } from './request-parts.js';
import { isValidRequestedScope } from './scopes.js';

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
export type AuthorizeParams = Record<(typeof AUTHORIZE_PARAMS)[number], string>;

export type Checked =
  | { kind: 'ok'; app: OAuth2ApplicationRow; params: AuthorizeParams; scopes: string[] }
  | { kind: 'page'; status: number; title: string; description: string }
  | { kind: 'redirect'; location: string };

/** The error redirect of RFC 6749 §4.1.2.1, to a redirect URI already known to be registered. */
export function errorRedirect(
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
export async function checkAuthorizeRequest(ctx: ServiceContext, source: unknown): Promise<Checked> {
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

/** Sends one of the provider's HTML pages. */
export function sendPage(reply: FastifyReply, status: number, html: string) {
  return reply.code(status).headers(PAGE_HEADERS).send(html);
}

/** Answers a refused authorization request: the page, or the redirect to the client. */
export function sendChecked(reply: FastifyReply, checked: Exclude<Checked, { kind: 'ok' }>) {
  if (checked.kind === 'redirect') return reply.code(303).header('location', checked.location).send();
  return sendPage(reply, checked.status, errorPage(checked.title, checked.description));
}
