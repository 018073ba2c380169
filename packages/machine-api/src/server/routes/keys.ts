/**
 * `GET /keys`, `POST /keys`, `DELETE /keys/{name}`: managing API keys over HTTP (`admin` scope); and the
 * decisions on keys apps asked for through OctoPrint's Application Keys flow (`/keys/requests`).
 */

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  ApiKey,
  AppKeyApproval,
  AppKeyRequestInfo,
  AppKeyRequestParams,
  CreatedApiKey,
  KeyNameParams,
  NewApiKey,
} from '../schemas/keys.js';
import { ref } from '../schemas/refs.js';
import { strictValidatorCompiler } from '../strict-validation.js';
import { errorResponses, ok, type RouteOptions } from '../types.js';

/**
 * The API key routes (`/keys…`, and the app-key requests awaiting approval).
 *
 * Long by design: one registration per route of the area, each a schema and a short handler that calls a service.
 */
export const keyRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { context }) => {
  const { keys, appKeys } = context;

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

  app.get(
    '/keys/requests',
    {
      schema: {
        operationId: 'list_key_requests',
        summary: 'Apps waiting for an API key (OctoPrint Application Keys flow), oldest first.',
        tags: ['access'],
        response: {
          200: ok(Type.Array(ref(AppKeyRequestInfo), { title: 'Array_of_AppKeyRequest' })),
          ...errorResponses,
        },
      },
    },
    async () =>
      (await appKeys.list()).map((request) => ({
        id: request.id,
        app: request.app,
        user: request.user,
        machine_id: request.machineId,
        created_at: request.createdAt,
        expires_at: request.expiresAt,
      })),
  );

  app.post(
    '/keys/requests/:id/approve',
    {
      schema: {
        operationId: 'approve_key_request',
        summary:
          "Approve an app's key request: creates a key named after the app (default scopes `read`, `control`), which the app's next poll receives. 404 unless pending.",
        tags: ['access'],
        params: AppKeyRequestParams,
        body: ref(AppKeyApproval),
        response: { 200: ok(ref(ApiKey)), ...errorResponses },
      },
      validatorCompiler: strictValidatorCompiler,
    },
    async (request) => {
      const key = await appKeys.approve(request.params.id, request.body.scopes);
      return { name: key.name, scopes: key.scopes, created_at: key.createdAt };
    },
  );

  app.post(
    '/keys/requests/:id/deny',
    {
      schema: {
        operationId: 'deny_key_request',
        summary: "Deny an app's key request; its next poll gets 404. 404 unless pending.",
        tags: ['access'],
        params: AppKeyRequestParams,
        response: { 204: { description: 'denied' }, ...errorResponses },
      },
    },
    async (request, reply) => {
      await appKeys.deny(request.params.id);
      return reply.code(204).send();
    },
  );
};
