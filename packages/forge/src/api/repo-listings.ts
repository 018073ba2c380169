import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { checkPublicOnly, requireScopes, requireUser } from '../auth/guards.js';
import { toRepositoryView } from '../convert/repository.js';
import { getOrganization, isOrgVisibleTo, orgNotFound } from '../services/orgs.js';
import {
  type Lister,
  listMyRepositories,
  listOwnerRepositories,
  searchRepositories,
} from '../services/repo-listing.js';
import type { RepositoryView } from '../services/repo-views.js';
import { assertUserVisible, getContextUser } from '../services/users.js';
import { RepositorySchema, SearchResultsSchema } from '../structs/repo.js';
import { RepoListQuerySchema, RepoSearchQuerySchema } from '../structs/repo-listing.js';
import { formBool, formInt64, formOptionalBool, formString, formTrim } from './form.js';
import { pageOf, setListHeaders } from './pagination.js';
import type { ApiRouteOptions } from './route-options.js';

const RepositoryListSchema = Type.Array(RepositorySchema);

/** `GET /repos/search` (token category repository; anonymous callers see public repositories). */
const repoSearchRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  const { config } = ctx;
  app.addHook('onRequest', requireScopes('repository'));

  app.get(
    '/repos/search',
    { schema: { querystring: RepoSearchQuerySchema, response: { 200: SearchResultsSchema } } },
    async (request, reply) => {
      const query = request.query;
      const page = pageOf(request, config);
      // The caller as its credential allows (a repository-scoped token lists only its repositories).
      const lister: Lister = request.auth;
      const { views, total } = await searchRepositories(ctx, lister, {
        keyword: formTrim(query.q),
        topicOnly: formBool(query.topic),
        includeDescription: formBool(query.includeDesc),
        uid: formInt64(query.uid),
        priorityOwnerId: formInt64(query.priority_owner_id),
        teamId: formInt64(query.team_id),
        starredBy: formInt64(query.starredBy),
        private: formOptionalBool(query.private),
        isPrivate: formOptionalBool(query.is_private),
        template: formOptionalBool(query.template),
        archived: formOptionalBool(query.archived),
        exclusive: formBool(query.exclusive),
        mode: formString(query.mode),
        sort: formString(query.sort),
        order: formString(query.order),
        page,
      });
      setListHeaders(reply, request, config, total, page);
      return { ok: true, data: render(views, request.auth.user) };
    },
  );

  function render(views: RepositoryView[], viewer: Lister['user']) {
    return views.map((view) => toRepositoryView(config, view, viewer));
  }
};

/** `GET /user/repos` and `GET /users/{username}/repos` (token categories user and repository). */
const userRepoListRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  const { config } = ctx;
  app.addHook('onRequest', requireScopes('user', 'repository'));

  app.get(
    '/user/repos',
    { schema: { querystring: RepoListQuerySchema, response: { 200: RepositoryListSchema } } },
    async (request, reply) => {
      const user = requireUser(request);
      const page = pageOf(request, config);
      const { views, total } = await listMyRepositories(ctx, { ...request.auth, user }, page);
      setListHeaders(reply, request, config, total, page);
      return views.map((view) => toRepositoryView(config, view, user));
    },
  );

  app.get(
    '/users/:username/repos',
    {
      schema: {
        params: Type.Object({ username: Type.String() }),
        querystring: RepoListQuerySchema,
        response: { 200: RepositoryListSchema },
      },
    },
    async (request, reply) => {
      const viewer = request.auth.user;
      const name = request.params.username;
      const owner = await getContextUser(ctx, name, viewer);
      await assertUserVisible(ctx, owner, viewer, name, request.auth.publicOnly);
      const page = pageOf(request, config);
      const { views, total } = await listOwnerRepositories(ctx, request.auth, owner, page);
      setListHeaders(reply, request, config, total, page);
      return views.map((view) => toRepositoryView(config, view, viewer));
    },
  );
};

/** `GET /orgs/{org}/repos` (token category organization; 404 for an organization the caller may not see). */
const orgRepoListRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  const { config } = ctx;
  app.addHook('onRequest', requireScopes('organization'));

  app.get(
    '/orgs/:org/repos',
    {
      schema: {
        params: Type.Object({ org: Type.String() }),
        querystring: RepoListQuerySchema,
        response: { 200: RepositoryListSchema },
      },
    },
    async (request, reply) => {
      const viewer = request.auth.user;
      const org = await getOrganization(ctx, request.params.org);
      checkPublicOnly(request, 'organization', org);
      if (!(await isOrgVisibleTo(ctx, org, viewer))) throw orgNotFound(request.params.org);
      const page = pageOf(request, config);
      const { views, total } = await listOwnerRepositories(ctx, request.auth, org, page);
      setListHeaders(reply, request, config, total, page);
      return views.map((view) => toRepositoryView(config, view, viewer));
    },
  );
};

/** The four repository listings. */
export const repoListingRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  await app.register(repoSearchRoutes, { ctx });
  await app.register(userRepoListRoutes, { ctx });
  await app.register(orgRepoListRoutes, { ctx });
};
