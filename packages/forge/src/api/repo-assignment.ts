import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requireScopes } from '../auth/guards.js';
import { Forbidden } from '../errors.js';
import type { ServiceContext } from '../services/context.js';
import type { RepoContext } from '../services/repo-context.js';
import { loadRepoContext } from '../services/repos.js';
import { assertTokenReaches } from '../services/token-repositories.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the repository assignment hook on every `/repos/{owner}/{repo}/…` route. */
    repoContext?: RepoContext;
  }
}

/**
 * Registers Gitea's `/repos/{owner}/{repo}` group middleware on a plugin: the repository token scope
 * (before the lookup, so a weak token gets 403 even for missing repositories), then repoAssignment (404
 * when missing or invisible) and checkTokenPublicOnly.
 */
export function useRepoAssignment(app: FastifyInstance, ctx: ServiceContext): void {
  app.addHook('onRequest', requireScopes('repository'));
  app.addHook('preValidation', async (request) => {
    const { owner, repo } = request.params as { owner: string; repo: string };
    const repoContext = await loadRepoContext(ctx, owner, repo, request.auth.user);
    assertTokenReaches(request.auth.repositories, repoContext.repo);
    if (request.auth.publicOnly && repoContext.repo.is_private === 1) {
      throw new Forbidden('token scope is limited to public repos');
    }
    request.repoContext = repoContext;
  });
}

/** The repository of the current request (the assignment hook ran). */
export function repoOf(request: FastifyRequest): RepoContext {
  if (!request.repoContext) throw new Error('repository route registered without useRepoAssignment');
  return request.repoContext;
}

function isSiteAdmin(request: FastifyRequest): boolean {
  return request.auth.user?.is_admin === 1;
}

/** Gitea's `reqRepoReader(unit)`. */
export function requireRepoReader(request: FastifyRequest, unit: number): RepoContext {
  const repo = repoOf(request);
  if (repo.permission.canRead(unit) || repo.permission.isAdmin() || isSiteAdmin(request)) return repo;
  throw new Forbidden('user should have specific read permission or be a repo admin or a site admin');
}

/** Gitea's `reqAnyRepoReader()`. */
export function requireAnyRepoReader(request: FastifyRequest): RepoContext {
  const repo = repoOf(request);
  if (repo.permission.hasAnyUnitAccess() || isSiteAdmin(request)) return repo;
  throw new Forbidden('user should have any permission to read repository or permissions of site admin');
}

/** Gitea's `reqRepoWriter(unit)`. */
export function requireRepoWriter(request: FastifyRequest, unit: number): RepoContext {
  const repo = repoOf(request);
  if (repo.permission.canWrite(unit) || repo.permission.isAdmin() || isSiteAdmin(request)) return repo;
  throw new Forbidden('user should have a permission to write to a repo');
}

/** Gitea's `reqAdmin()`: repository admin or site admin. */
export function requireRepoAdmin(request: FastifyRequest): RepoContext {
  const repo = repoOf(request);
  if (repo.permission.isAdmin() || isSiteAdmin(request)) return repo;
  throw new Forbidden('user should be an owner or a collaborator with admin write of a repository');
}

/** Gitea's `reqOwner()`: repository owner (incl. org owners) or site admin. */
export function requireRepoOwner(request: FastifyRequest): RepoContext {
  const repo = repoOf(request);
  if (repo.permission.isOwner() || isSiteAdmin(request)) return repo;
  throw new Forbidden('user should be the owner of the repo');
}
