/** `GET /` (the OpenAPI document), `GET /ping` and `GET /metrics`. */

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Pong } from '../schemas/meta.js';
import { ref } from '../schemas/refs.js';
import { errorResponses, ok, type RouteOptions } from '../types.js';

/** The body of every `GET /ping` answer. */
export const PONG = { message: 'pong' } as const;

export const metaRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { context }) => {
  let documentText: string | undefined;
  app.get(
    '/',
    {
      schema: {
        operationId: 'api_get_schema',
        summary: 'Return the OpenAPI schema in JSON format.',
        tags: ['meta'],
        response: { 200: ok(Type.Unknown()), ...errorResponses },
      },
    },
    async (_request, reply) => {
      documentText ??= JSON.stringify(app.swagger());
      return reply.type('application/json; charset=utf-8').send(documentText);
    },
  );

  app.get(
    '/ping',
    {
      schema: {
        operationId: 'ping',
        summary: 'Return pong.',
        tags: ['meta'],
        response: { 200: ok(ref(Pong)), ...errorResponses },
      },
    },
    // Not async: a plain value is sent at once, without a promise and a microtask per request.
    () => PONG,
  );

  app.get(
    '/metrics',
    {
      schema: {
        operationId: 'get_metrics',
        summary: 'Prometheus metrics: machine states and temperatures, job outcomes, request durations.',
        tags: ['hidden'],
        response: {
          200: {
            description: 'successful operation',
            content: { 'text/plain': { schema: Type.String({ title: 'String' }) } },
          },
          ...errorResponses,
        },
      },
    },
    async (_request, reply) => {
      const text = await context.metrics.render();
      return reply.type(context.metrics.contentType).send(text);
    },
  );
};
