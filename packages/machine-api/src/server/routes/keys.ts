/** `GET /keys`, `POST /keys`, `DELETE /keys/{name}`: managing API keys over HTTP (`admin` scope). */

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiKey, CreatedApiKey, KeyNameParams, NewApiKey } from '../schemas/keys.js';
import { ref } from '../schemas/refs.js';
import { errorResponses, ok, type RouteOptions } from '../types.js';

export const keyRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { context }) => {
  const { keys } = context;

  app.get(
    '/keys',
    {
      schema: {
        operationId: 'list_keys',
        summary: 'List API keys (names and scopes; never the keys themselves).',
        tags: ['access'],
        response: { 200: ok(Type.Array(ref(ApiKey), { title: 'Array_of_ApiKey' })), ...errorResponses },
      },
    },
    async () => {
      const list = await keys.list();
      return list.map((key) => ({ name: key.name, scopes: key.scopes, created_at: key.createdAt }));
    },
  );

  app.post(
    '/keys',
    {
      schema: {
        operationId: 'create_key',
        summary: 'Create an API key; the response is the only place the key is ever shown.',
        tags: ['access'],
        body: ref(NewApiKey),
        response: {
          201: { description: 'created', content: { 'application/json': { schema: ref(CreatedApiKey) } } },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const created = await keys.create(request.body.name, request.body.scopes);
      reply.code(201).header('cache-control', 'no-store');
      return { name: created.name, scopes: created.scopes, created_at: created.createdAt, key: created.key };
    },
  );

  app.delete(
    '/keys/:name',
    {
      schema: {
        operationId: 'revoke_key',
        summary: 'Revoke an API key; it stops working with the next request.',
        tags: ['access'],
        params: KeyNameParams,
        response: { 204: { description: 'revoked' }, ...errorResponses },
      },
    },
    async (request, reply) => {
      await keys.revoke(request.params.name);
      return reply.code(204).send();
    },
  );
};
