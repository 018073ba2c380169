import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireScopes, requireSiteAdmin } from '../auth/guards.js';
import { toUser } from '../convert/user.js';
import { Invalid } from '../errors.js';
import {
  adminDeleteUser,
  adminEditUser,
  createUser,
  getUserByName,
  searchVisibleUsers,
} from '../services/users.js';
import { PageQuerySchema } from '../structs/query.js';
import { NoContentSchema } from '../structs/responses.js';
import { CreateUserOptionSchema, EditUserOptionSchema, UserSchema } from '../structs/user.js';
import { pageOf, setListHeaders } from './pagination.js';
import type { ApiRouteOptions } from './route-options.js';

const UsernameParams = Type.Object({ username: Type.String() });

/** `/admin/users…` (token category `admin`, site administrators only). */
export const adminUsersRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  const { config } = ctx;
  app.addHook('onRequest', requireScopes('admin'));
  app.addHook('preHandler', async (request) => {
    requireSiteAdmin(request);
  });

  app.post(
    '/admin/users',
    { schema: { body: CreateUserOptionSchema, response: { 201: UserSchema } } },
    async (request, reply) => {
      const body = request.body;
      const user = await createUser(ctx, {
        username: body.username,
        email: body.email,
        password: body.password ?? '',
        fullName: body.full_name,
        loginName: body.login_name,
        mustChangePassword: body.must_change_password,
        restricted: body.restricted,
        visibility: body.visibility,
      });
      return reply.code(201).send(toUser(config, user, request.auth.user));
    },
  );

  app.get(
    '/admin/users',
    { schema: { querystring: PageQuerySchema, response: { 200: Type.Array(UserSchema) } } },
    async (request, reply) => {
      const page = pageOf(request, config);
      const { rows, total } = await searchVisibleUsers(ctx, request.auth.user, {
        keyword: '',
        uid: 0,
        publicOnly: false,
        page,
      });
      setListHeaders(reply, request, config, total, page);
      return rows.map((user) => toUser(config, user, request.auth.user));
    },
  );

  app.patch(
    '/admin/users/:username',
    { schema: { params: UsernameParams, body: EditUserOptionSchema, response: { 200: UserSchema } } },
    async (request) => {
      const user = await getUserByName(ctx, request.params.username);
      const updated = await adminEditUser(ctx, user, request.body);
      return toUser(config, updated, request.auth.user);
    },
  );

  app.delete(
    '/admin/users/:username',
    { schema: { params: UsernameParams, response: { 204: NoContentSchema } } },
    async (request, reply) => {
      const user = await getUserByName(ctx, request.params.username);
      if (user.id === request.auth.user?.id) throw new Invalid('you cannot delete yourself');
      await adminDeleteUser(ctx, user);
      return reply.code(204).send(null);
    },
  );
};
