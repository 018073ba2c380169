/**
 * OctoPrint's Application Keys plugin, as apps without a key call it (no key needed on these three):
 * `GET plugin/appkeys/probe` (204: the flow is available), `POST plugin/appkeys/request` (201 with the
 * polling URL in `Location`), `GET plugin/appkeys/request/{token}` (202 while waiting, 200 with the key
 * once approved, 404 when denied or expired). The decision is an administrator's (`/keys/requests`).
 */

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ref } from '../../server/schemas/refs.js';
import { strictValidatorCompiler } from '../../server/strict-validation.js';
import { basePath } from '../base-url.js';
import { AppKeyDecision, AppKeyRequestBody, AppKeyRequestCreated } from '../schemas/apps.js';
import { type OctoPrintContext, octoPrintErrorResponses, TargetParams, targetOf } from './target.js';

const PollParams = Type.Object({
  target: Type.String(),
  token: Type.String({ description: 'The polling token from `Location`.' }),
});

export const appKeyRoutes: FastifyPluginAsyncTypebox<OctoPrintContext> = async (app, context) => {
  const { appKeys, machines } = context;

  app.get(
    '/octoprint/:target/plugin/appkeys/probe',
    {
      schema: {
        operationId: 'octoprint_appkeys_probe',
        summary: 'OctoPrint Application Keys: 204 says the key request flow is available.',
        tags: ['octoprint'],
        params: TargetParams,
        response: { 204: { description: 'available' }, ...octoPrintErrorResponses },
      },
    },
    async (request, reply) => {
      targetOf(machines, request.params, request.query);
      return reply.code(204).send();
    },
  );

  app.post(
    '/octoprint/:target/plugin/appkeys/request',
    {
      schema: {
        operationId: 'octoprint_appkeys_request',
        summary:
          'OctoPrint Application Keys: ask for a key (no key needed). 201 with the polling URL in `Location`; an administrator approves it at `POST /keys/requests/{id}/approve`. 429 while 50 requests wait.',
        tags: ['octoprint'],
        params: TargetParams,
        body: ref(AppKeyRequestBody),
        response: {
          201: {
            description: 'recorded; poll `Location`',
            content: { 'application/json': { schema: ref(AppKeyRequestCreated) } },
          },
          ...octoPrintErrorResponses,
        },
      },
      validatorCompiler: strictValidatorCompiler,
    },
    async (request, reply) => {
      const target = targetOf(machines, request.params, request.query);
      const machineId = target.kind === 'machine' ? target.machineId : 'queue';
      const { pollToken } = await appKeys.request(request.body.app, request.body.user, machineId);
      const host = request.headers.host ?? 'localhost';
      const location = `${request.protocol}://${host}${basePath(target)}plugin/appkeys/request/${pollToken}`;
      reply.code(201).header('location', location).header('cache-control', 'no-store');
      return { app_token: pollToken };
    },
  );

  app.get(
    '/octoprint/:target/plugin/appkeys/request/:token',
    {
      schema: {
        operationId: 'octoprint_appkeys_poll',
        summary:
          'OctoPrint Application Keys: the decision. 202 `{"message": "Awaiting decision"}` while pending; 200 `{"api_key"}` once approved (handed out once); 404 when denied, expired or already fetched.',
        tags: ['octoprint'],
        params: PollParams,
        response: {
          200: { description: 'approved', content: { 'application/json': { schema: ref(AppKeyDecision) } } },
          202: { description: 'pending', content: { 'application/json': { schema: ref(AppKeyDecision) } } },
          ...octoPrintErrorResponses,
        },
      },
    },
    async (request, reply) => {
      targetOf(machines, request.params, request.query);
      const decision = await appKeys.poll(request.params.token);
      reply.header('cache-control', 'no-store');
      if (decision.state === 'pending') return reply.code(202).send({ message: 'Awaiting decision' });
      return { api_key: decision.apiKey };
    },
  );
};
