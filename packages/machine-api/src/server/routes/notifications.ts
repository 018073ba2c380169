/**
 * `/notifications/targets…` and `/notifications/deliveries` (`admin` scope): managing notification targets,
 * sending a test message, reading the delivery log. The rules are in notify/service.ts.
 */

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  DeliveriesQuery,
  NewNotificationTarget,
  NotificationDelivery,
  NotificationTarget,
  NotificationTargetPatch,
  TargetIdParams,
} from '../../notify/schemas.js';
import type { TargetPatch } from '../../notify/targets.js';
import { ref, validationSchema } from '../schemas/refs.js';
import { strictValidatorCompiler } from '../strict-validation.js';
import { errorResponses, ok, type RouteOptions } from '../types.js';

const TAG = ['notifications'];

/**
 * The notification target routes (`/notifications/targets…`).
 *
 * Long by design: one registration per route of the area, each a schema and a short handler that calls a service.
 */
export const notificationRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { context }) => {
  const { notifications } = context;

  app.get(
    '/notifications/targets',
    {
      schema: {
        operationId: 'list_notification_targets',
        summary: 'List notification targets (never their secrets).',
        tags: TAG,
        response: {
          200: ok(Type.Array(ref(NotificationTarget), { title: 'Array_of_NotificationTarget' })),
          ...errorResponses,
        },
      },
    },
    () => notifications.list(),
  );

  app.post(
    '/notifications/targets',
    {
      schema: {
        operationId: 'create_notification_target',
        summary: 'Add a notification target.',
        tags: TAG,
        body: validationSchema(NewNotificationTarget),
        response: {
          201: {
            description: 'created',
            content: { 'application/json': { schema: ref(NotificationTarget) } },
          },
          ...errorResponses,
        },
      },
      // JSON validated without coercion (a string port is a client bug); documented by reference.
      validatorCompiler: strictValidatorCompiler,
      config: {
        swaggerTransform: ({ schema, url }) => ({
          url,
          schema: { ...schema, body: ref(NewNotificationTarget) },
        }),
      },
    },
    async (request, reply) => {
      const created = await notifications.create(request.body);
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/notifications/targets/:id',
    {
      schema: {
        operationId: 'get_notification_target',
        summary: 'One notification target.',
        tags: TAG,
        params: TargetIdParams,
        response: { 200: ok(ref(NotificationTarget)), ...errorResponses },
      },
    },
    (request) => notifications.get(request.params.id),
  );

  app.patch(
    '/notifications/targets/:id',
    {
      schema: {
        operationId: 'update_notification_target',
        summary:
          'Change a target made over the API (`null` removes an optional setting; a secret not given is kept).',
        tags: TAG,
        params: TargetIdParams,
        body: validationSchema(NotificationTargetPatch),
        response: { 200: ok(ref(NotificationTarget)), ...errorResponses },
      },
      // JSON validated without coercion (a string port is a client bug); documented by reference.
      validatorCompiler: strictValidatorCompiler,
      config: {
        swaggerTransform: ({ schema, url }) => ({
          url,
          schema: { ...schema, body: ref(NotificationTargetPatch) },
        }),
      },
    },
    (request) => notifications.update(request.params.id, request.body as TargetPatch),
  );

  app.delete(
    '/notifications/targets/:id',
    {
      schema: {
        operationId: 'delete_notification_target',
        summary: 'Remove a target made over the API; its pending deliveries fail, its log stays.',
        tags: TAG,
        params: TargetIdParams,
        response: { 204: { description: 'removed' }, ...errorResponses },
      },
    },
    async (request, reply) => {
      await notifications.remove(request.params.id);
      return reply.code(204).send();
    },
  );

  app.post(
    '/notifications/targets/:id/test',
    {
      schema: {
        operationId: 'test_notification_target',
        summary:
          'Send the `test` notification to a target now (ignoring its filters, quiet hours and burst limit).',
        tags: TAG,
        params: TargetIdParams,
        response: {
          202: {
            description: 'recorded in the outbox; follow it in the delivery log',
            content: { 'application/json': { schema: ref(NotificationDelivery) } },
          },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => reply.code(202).send(await notifications.test(request.params.id)),
  );

  app.get(
    '/notifications/deliveries',
    {
      schema: {
        operationId: 'list_notification_deliveries',
        summary: 'The delivery log, newest first.',
        tags: TAG,
        querystring: DeliveriesQuery,
        response: {
          200: ok(Type.Array(ref(NotificationDelivery), { title: 'Array_of_NotificationDelivery' })),
          ...errorResponses,
        },
      },
    },
    (request) => notifications.deliveries(request.query),
  );
};
