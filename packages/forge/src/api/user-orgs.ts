import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { checkPublicOnly, requireScopes, requireUser } from '../auth/guards.js';
import { toOrganization } from '../convert/org.js';
import { listUserOrganizations } from '../services/orgs.js';
import { assertUserVisible, getContextUser } from '../services/users.js';
import { pageOf, setListHeaders } from './pagination.js';
import type { ApiRouteOptions } from './route-options.js';
import { OrganizationSchema } from './schemas/org.js';

/** `/user/orgs` and `/users/{username}/orgs`: need both the `user` and `organization` categories. */
export const userOrgsRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  const { config } = ctx;
  app.addHook('onRequest', requireScopes('user', 'organization'));
  const response = { 200: Type.Array(OrganizationSchema) };

  app.get('/user/orgs', { schema: { response } }, async (request, reply) => {
    const doer = requireUser(request);
    const page = pageOf(request, config);
    const { rows, total } = await listUserOrganizations(ctx, doer, doer, page);
    setListHeaders(reply, request, config, total, page);
    return rows.map((org) => toOrganization(config, org));
  });

  app.get(
    '/users/:username/orgs',
    { schema: { params: Type.Object({ username: Type.String() }), response } },
    async (request, reply) => {
      const viewer = request.auth.user;
      const user = await getContextUser(ctx, request.params.username, viewer);
      checkPublicOnly(request, 'user', user);
      await assertUserVisible(ctx, user, viewer, request.params.username);
      const page = pageOf(request, config);
      const { rows, total } = await listUserOrganizations(ctx, user, viewer, page);
      setListHeaders(reply, request, config, total, page);
      return rows.map((org) => toOrganization(config, org));
    },
  );
};
