import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { Forbidden, Unauthorized } from '../errors.js';
import { type UserRow, UserType, Visibility } from '../store/schema.js';
import { levelForMethod, type ScopeCategory } from './scopes.js';

/**
 * Gitea's `tokenRequiresScopes(...)` as an onRequest hook for a route group: a scoped token must hold
 * every listed category at the level the method implies. It runs before the target is looked up, so an
 * insufficient token gets 403 even for targets that do not exist.
 */
export function requireScopes(...categories: ScopeCategory[]) {
  // A callback hook: it never waits, and an async one costs every request a promise and a tick.
  return (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const { scope, scopeText } = request.auth;
    const level = levelForMethod(request.method);
    if (!scope || categories.every((category) => scope.has(category, level))) {
      done();
      return;
    }
    const required = categories.map((category) => `${level}:${category}`).join(' ');
    done(
      new Forbidden(
        `token does not have at least one of required scope(s), required=[${required}], token scope=${scopeText}`,
      ),
    );
  };
}

/** Gitea's `reqToken()`: the signed-in user, or 401. */
export function requireUser(request: FastifyRequest): UserRow {
  if (!request.auth.user) throw new Unauthorized('token is required');
  return request.auth.user;
}

/** Gitea's `reqSiteAdmin()`. */
export function requireSiteAdmin(request: FastifyRequest): UserRow {
  const user = requireUser(request);
  if (!user.is_admin) throw new Forbidden('user should be the site admin');
  return user;
}

/** Gitea's `reqBasicOrRevProxyAuth()`. */
export function requireBasicAuth(request: FastifyRequest): void {
  if (!request.auth.isBasic) throw new Unauthorized('auth required');
}

/** Gitea's `reqSelfOrAdmin()` for a user in context. */
export function requireSelfOrAdmin(request: FastifyRequest, contextUser: UserRow): void {
  const doer = request.auth.user;
  if (doer?.is_admin || doer?.id === contextUser.id) return;
  throw new Forbidden('doer should be the site admin or be same as the contextUser');
}

/**
 * Gitea's `checkTokenPublicOnly()` for an organization in context. (For individuals the users service
 * answers 404 instead, so a public-only token cannot tell a private user from an absent one.)
 */
export function checkPublicOnly(request: FastifyRequest, category: 'organization', target: UserRow): void {
  if (!request.auth.publicOnly || target.visibility === Visibility.Public) return;
  if (category === 'organization' && target.type === UserType.Organization) {
    throw new Forbidden('token scope is limited to public orgs');
  }
}
