import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireScopes, requireUser } from '../auth/guards.js';
import { toBranch, toRepository } from '../convert/repository.js';
import { toUser } from '../convert/user.js';
import { NotFound } from '../errors.js';
import type { ServiceContext } from '../services/context.js';
import { getOrganization, isOrgVisibleTo } from '../services/orgs.js';
import { getRepoPermission } from '../services/permissions.js';
import { countPublishedReleases } from '../services/releases.js';
import {
  createOrgRepository,
  createRepository,
  deleteRepository,
  editRepository,
  getBranch,
  isCollaborator,
  listBranches,
  listCollaborators,
  putCollaborator,
  removeCollaborator,
} from '../services/repos.js';
import type { RepositoryRow, UserRow } from '../store/schema.js';
import { UnitType } from '../store/units.js';
import { PageQuerySchema } from '../structs/query.js';
import {
  AddCollaboratorOptionSchema,
  BranchSchema,
  CreateRepoOptionSchema,
  EditRepoOptionSchema,
  RepositorySchema,
} from '../structs/repo.js';
import { NoContentSchema } from '../structs/responses.js';
import { UserSchema } from '../structs/user.js';
import { pageOf, setListHeaders } from './pagination.js';
import {
  requireAnyRepoReader,
  requireRepoAdmin,
  requireRepoOwner,
  requireRepoReader,
  useRepoAssignment,
} from './repo-assignment.js';
import type { ApiRouteOptions } from './route-options.js';

const RepoParams = Type.Object({ owner: Type.String(), repo: Type.String() });
const BranchParams = Type.Object({
  owner: Type.String(),
  repo: Type.String(),
  '*': Type.String({ title: 'branch' }),
});
const CollaboratorParams = Type.Object({
  owner: Type.String(),
  repo: Type.String(),
  collaborator: Type.String(),
});

/** Renders a repository for the viewer, with the viewer's permissions. */
async function renderRepository(
  ctx: ServiceContext,
  repo: RepositoryRow,
  owner: UserRow,
  viewer: UserRow | null,
) {
  const permission = await getRepoPermission(ctx.db, repo, owner, viewer);
  return toRepository(ctx.config, repo, owner, viewer, permission, {
    releases: await countPublishedReleases(ctx.db, repo.id),
  });
}

/** `POST /user/repos` and `POST /orgs/{org}/repos` (reference §8.4). */
const repoCreationRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  app.post(
    '/user/repos',
    {
      onRequest: requireScopes('user', 'repository'),
      schema: { body: CreateRepoOptionSchema, response: { 201: RepositorySchema } },
    },
    async (request, reply) => {
      const doer = requireUser(request);
      const repo = await createRepository(ctx, doer, doer, request.body);
      return reply.code(201).send(await renderRepository(ctx, repo, doer, doer));
    },
  );

  app.post(
    '/orgs/:org/repos',
    {
      onRequest: requireScopes('organization'),
      schema: {
        params: Type.Object({ org: Type.String() }),
        body: CreateRepoOptionSchema,
        response: { 201: RepositorySchema },
      },
    },
    async (request, reply) => {
      const doer = requireUser(request);
      const org = await getOrganization(ctx, request.params.org);
      if (!(await isOrgVisibleTo(ctx, org, doer))) throw new NotFound();
      const repo = await createOrgRepository(ctx, doer, org, request.body);
      return reply.code(201).send(await renderRepository(ctx, repo, org, doer));
    },
  );
};

/**
 * `/repos/{owner}/{repo}`, its branches and collaborators (reference §8.4–8.5).
 *
 * Long by design: one registration per route of the area, each a schema and a short handler; the rules live in services/.
 */
const repoScopedRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  useRepoAssignment(app, ctx);

  app.get(
    '/repos/:owner/:repo',
    { schema: { params: RepoParams, response: { 200: RepositorySchema } } },
    async (request) => {
      const repo = requireAnyRepoReader(request);
      return renderRepository(ctx, repo.repo, repo.owner, repo.doer);
    },
  );

  app.patch(
    '/repos/:owner/:repo',
    { schema: { params: RepoParams, body: EditRepoOptionSchema, response: { 200: RepositorySchema } } },
    async (request) => {
      requireUser(request);
      const repo = requireRepoAdmin(request);
      const updated = await editRepository(repo, request.body);
      return renderRepository(ctx, updated, repo.owner, repo.doer);
    },
  );

  app.delete(
    '/repos/:owner/:repo',
    { schema: { params: RepoParams, response: { 204: NoContentSchema } } },
    async (request, reply) => {
      requireUser(request);
      const repo = requireRepoOwner(request);
      await deleteRepository(repo);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/repos/:owner/:repo/branches',
    {
      schema: {
        querystring: PageQuerySchema,
        params: RepoParams,
        response: { 200: Type.Array(BranchSchema) },
      },
    },
    async (request, reply) => {
      const repo = requireRepoReader(request, UnitType.Code);
      const page = pageOf(request, ctx.config);
      const { branches, total } = await listBranches(repo, page);
      setListHeaders(reply, request, ctx.config, total, page);
      return branches.map((branch) => toBranch(ctx.config, repo.owner, repo.repo, branch, repo.permission));
    },
  );

  // Branch names may contain "/", so the name is the rest of the path.
  app.get(
    '/repos/:owner/:repo/branches/*',
    { schema: { params: BranchParams, response: { 200: BranchSchema } } },
    async (request) => {
      const repo = requireRepoReader(request, UnitType.Code);
      const branch = await getBranch(repo, request.params['*']);
      return toBranch(ctx.config, repo.owner, repo.repo, branch, repo.permission);
    },
  );

  app.get(
    '/repos/:owner/:repo/collaborators',
    {
      schema: { querystring: PageQuerySchema, params: RepoParams, response: { 200: Type.Array(UserSchema) } },
    },
    async (request, reply) => {
      const repo = requireAnyRepoReader(request);
      const page = pageOf(request, ctx.config);
      const { users, total } = await listCollaborators(repo, page);
      setListHeaders(reply, request, ctx.config, total, page);
      return users.map((user) => toUser(ctx.config, user, repo.doer));
    },
  );

  app.get(
    '/repos/:owner/:repo/collaborators/:collaborator',
    { schema: { params: CollaboratorParams, response: { 204: NoContentSchema } } },
    async (request, reply) => {
      requireUser(request);
      const repo = requireAnyRepoReader(request);
      if (!(await isCollaborator(repo, request.params.collaborator))) throw new NotFound();
      return reply.code(204).send(null);
    },
  );

  app.put(
    '/repos/:owner/:repo/collaborators/:collaborator',
    {
      // The body is optional (no body means write access), so an absent one validates as `{}`.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        params: CollaboratorParams,
        body: AddCollaboratorOptionSchema,
        response: { 204: NoContentSchema },
      },
    },
    async (request, reply) => {
      requireUser(request);
      const repo = requireRepoAdmin(request);
      await putCollaborator(repo, request.params.collaborator, request.body.permission);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/repos/:owner/:repo/collaborators/:collaborator',
    { schema: { params: CollaboratorParams, response: { 204: NoContentSchema } } },
    async (request, reply) => {
      requireUser(request);
      const repo = requireRepoAdmin(request);
      await removeCollaborator(repo, request.params.collaborator);
      return reply.code(204).send(null);
    },
  );
};

/** Every repository route: creation plus the `/repos/{owner}/{repo}` group. */
export const repoRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  // Children inherit this plugin's prefix; passing it again would double it.
  await app.register(repoCreationRoutes, { ctx });
  await app.register(repoScopedRoutes, { ctx });
};
