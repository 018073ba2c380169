import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireScopes, requireUser } from '../auth/guards.js';
import { toPublicKey } from '../convert/key.js';
import { toUser } from '../convert/user.js';
import { addUserKey, deleteUserKey, getKey, listUserKeys } from '../services/keys.js';
import { userById } from '../services/users.js';
import { CreateKeyOptionSchema, PublicKeySchema } from '../structs/key.js';
import { PageQuerySchema, PathInt64 } from '../structs/query.js';
import { NoContentSchema } from '../structs/responses.js';
import { UserSchema } from '../structs/user.js';
import { pageOf, setListHeaders } from './pagination.js';
import type { ApiRouteOptions } from './route-options.js';

const KeyIdParams = Type.Object({ id: PathInt64('id of the key') });

/** `/user` (the signed-in caller) and `/user/keys` (token category `user`, sign-in required). */
export const currentUserRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  const { config } = ctx;
  app.addHook('onRequest', requireScopes('user'));
  app.addHook('preHandler', async (request) => {
    requireUser(request);
  });

  app.get('/user', { schema: { response: { 200: UserSchema } } }, async (request) => {
    const doer = requireUser(request);
    return toUser(config, doer, doer);
  });

  app.get(
    '/user/keys',
    { schema: { querystring: PageQuerySchema, response: { 200: Type.Array(PublicKeySchema) } } },
    async (request, reply) => {
      const doer = requireUser(request);
      const page = pageOf(request, config);
      const fingerprint = (request.query as Record<string, string | undefined>).fingerprint || undefined;
      const { rows, total } = await listUserKeys(ctx, doer, page, fingerprint);
      setListHeaders(reply, request, config, total, page);
      return rows.map((key) => toPublicKey(config, key, doer, doer));
    },
  );

  app.post(
    '/user/keys',
    { schema: { body: CreateKeyOptionSchema, response: { 201: PublicKeySchema } } },
    async (request, reply) => {
      const doer = requireUser(request);
      const key = await addUserKey(ctx, doer, request.body);
      return reply.code(201).send(toPublicKey(config, key, doer, doer));
    },
  );

  app.get(
    '/user/keys/:id',
    { schema: { params: KeyIdParams, response: { 200: PublicKeySchema } } },
    async (request) => {
      const doer = requireUser(request);
      const key = await getKey(ctx, Number(request.params.id));
      // The owner is shown to the owner and to site admins only.
      const owner =
        doer.id === key.owner_id ? doer : doer.is_admin ? await userById(ctx, key.owner_id) : null;
      return toPublicKey(config, key, owner ?? null, doer);
    },
  );

  app.delete(
    '/user/keys/:id',
    { schema: { params: KeyIdParams, response: { 204: NoContentSchema } } },
    async (request, reply) => {
      const doer = requireUser(request);
      await deleteUserKey(ctx, doer, Number(request.params.id));
      return reply.code(204).send(null);
    },
  );
};
