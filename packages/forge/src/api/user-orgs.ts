import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireScopes, requireUser } from '../auth/guards.js';
import { toOrganization } from '../convert/org.js';
import { listUserOrganizations } from '../services/orgs.js';
import { assertUserVisible, getContextUser } from '../services/users.js';
import { OrganizationSchema } from '../structs/org.js';
import { PageQuerySchema } from '../structs/query.js';
import { pageOf, setListHeaders } from './pagination.js';
import type { ApiRouteOptions } from './route-options.js';

/** `/user/orgs` and `/users/{username}/orgs`: need both the `user` and `organization` categories. */
export const userOrgsRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  const { config } = ctx;
  app.addHook('onRequest', requireScopes('user', 'organization'));
  const response = { 200: Type.Array(OrganizationSchema) };

  app.get('/user/orgs', { schema: { querystring: PageQuerySchema, response } }, async (request, reply) => {
    const doer = requireUser(request);
    const page = pageOf(request, config);
    const { rows, total } = await listUserOrganizations(ctx, doer, doer, page);
    setListHeaders(reply, request, config, total, page);
    return rows.map((org) => toOrganization(config, org));
  });

  app.get(
    '/users/:username/orgs',
    { schema: { querystring: PageQuerySchema, params: Type.Object({ username: Type.String() }), response } },
    async (request, reply) => {
      const viewer = request.auth.user;
      const user = await getContextUser(ctx, request.params.username, viewer);
      await assertUserVisible(ctx, user, viewer, request.params.username, request.auth.publicOnly);
      const page = pageOf(request, config);
      const { rows, total } = await listUserOrganizations(ctx, user, viewer, page);
      setListHeaders(reply, request, config, total, page);
      return rows.map((org) => toOrganization(config, org));
    },
  );
};
