import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireScopes, requireUser } from '../auth/guards.js';
import { toOAuth2Application } from '../convert/oauth2.js';
import {
  createOAuth2Application,
  deleteOAuth2Application,
  getOAuth2Application,
  listOAuth2Applications,
  updateOAuth2Application,
} from '../services/oauth2-apps.js';
import { CreateOAuth2ApplicationOptionsSchema, OAuth2ApplicationSchema } from '../structs/oauth2.js';
import { PageQuerySchema, PathInt64 } from '../structs/query.js';
import { NoContentSchema } from '../structs/responses.js';
import { pageOf, setTotalCount } from './pagination.js';
import type { ApiRouteOptions } from './route-options.js';

const IdParams = Type.Object({ id: PathInt64('id of the application') });

/** `/user/applications/oauth2`: the caller's OAuth2 applications (token category `user`, sign-in required). */
export const oauth2AppsRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  app.addHook('onRequest', requireScopes('user'));
  app.addHook('preHandler', async (request) => {
    requireUser(request);
  });

  app.post(
    '/user/applications/oauth2',
    { schema: { body: CreateOAuth2ApplicationOptionsSchema, response: { 201: OAuth2ApplicationSchema } } },
    async (request, reply) => {
      const { row, secret } = await createOAuth2Application(ctx, requireUser(request), request.body);
      return reply.code(201).send(toOAuth2Application(row, secret));
    },
  );

  app.get(
    '/user/applications/oauth2',
    { schema: { querystring: PageQuerySchema, response: { 200: Type.Array(OAuth2ApplicationSchema) } } },
    async (request, reply) => {
      const page = pageOf(request, ctx.config);
      const { rows, total } = await listOAuth2Applications(ctx, requireUser(request), page);
      setTotalCount(reply, total);
      return rows.map((row) => toOAuth2Application(row));
    },
  );

  app.get(
    '/user/applications/oauth2/:id',
    { schema: { params: IdParams, response: { 200: OAuth2ApplicationSchema } } },
    async (request) => {
      const row = await getOAuth2Application(ctx, requireUser(request), request.params.id);
      return toOAuth2Application(row);
    },
  );

  app.patch(
    '/user/applications/oauth2/:id',
    {
      schema: {
        params: IdParams,
        body: CreateOAuth2ApplicationOptionsSchema,
        response: { 200: OAuth2ApplicationSchema },
      },
    },
    async (request) => {
      const { row, secret } = await updateOAuth2Application(
        ctx,
        requireUser(request),
        request.params.id,
        request.body,
      );
      return toOAuth2Application(row, secret);
    },
  );

  app.delete(
    '/user/applications/oauth2/:id',
    { schema: { params: IdParams, response: { 204: NoContentSchema } } },
    async (request, reply) => {
      await deleteOAuth2Application(ctx, requireUser(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
};
