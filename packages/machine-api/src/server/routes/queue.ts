/** `POST /queue` (a design and constraints in, a waiting job out) and `GET /queue` (the waiting jobs in order). */

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { jobResponse } from '../convert.js';
import { receivePrintForm } from '../multipart.js';
import { Job, QueueEntry } from '../schemas/jobs.js';
import { QueueParameters } from '../schemas/queue.js';
import { ref, validationSchema } from '../schemas/refs.js';
import { strictValidator } from '../strict-validation.js';
import { errorResponses, ok, type RouteOptions } from '../types.js';
import { parseParamsPart } from './print.js';

/** What the request body is, for the OpenAPI document (the body is read as a stream, not validated whole). */
const MultipartDesign = Type.Unsafe({ type: 'string', format: 'binary' });

const paramsSchema = validationSchema(QueueParameters);

/** `GET /queue` bodies by the list they were made from; a list no longer answered is dropped with it. */
const serialisedQueues = new WeakMap<readonly unknown[], Buffer>();

export const queueRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { context }) => {
  const { queue, jobs } = context;

  app.post(
    '/queue',
    {
      schema: {
        operationId: 'queue_file',
        summary:
          'Queue a design for the first ready machine that satisfies the constraints (multipart: `file` and `params` as JSON QueueParameters).',
        tags: ['queue'],
        response: {
          201: { description: 'queued', content: { 'application/json': { schema: ref(Job) } } },
          ...errorResponses,
        },
      },
      config: {
        swaggerTransform: ({ schema, url }) => ({
          url,
          schema: { ...schema, consumes: ['multipart/form-data'], body: MultipartDesign },
        }),
      },
    },
    async (request, reply) => {
      const form = await receivePrintForm(request, {
        uploadDir: jobs.uploadDir,
        maxBytes: context.maxUploadBytes,
        maxLineBytes: jobs.maxLineBytes,
        route: 'POST /queue',
        paramsSchema: 'QueueParameters',
      });
      try {
        const params = parseParamsPart(
          form.params,
          strictValidator(paramsSchema),
          'QueueParameters',
        ) as QueueParameters;
        const job = await queue.submit(
          form.upload,
          {
            jobName: params.job_name,
            constraints: {
              ...(params.machine_ids !== undefined ? { machine_ids: params.machine_ids } : {}),
              ...(params.material !== undefined ? { material: params.material } : {}),
              ...(params.nozzle_diameter !== undefined ? { nozzle_diameter: params.nozzle_diameter } : {}),
              ...(params.machine_type !== undefined ? { machine_type: params.machine_type } : {}),
            },
            priority: params.priority ?? 0,
            ...(params.slicer_configuration !== undefined
              ? { slicerConfiguration: params.slicer_configuration }
              : {}),
          },
          request.actor?.name ?? null,
        );
        return reply
          .code(201)
          .send(jobResponse(job, { progress: jobs.progressOf(job), position: queue.positionOf(job.id) }));
      } finally {
        await form.discard();
      }
    },
  );

  app.get(
    '/queue',
    {
      schema: {
        operationId: 'get_queue',
        summary: 'The jobs waiting for a machine, in dispatch order, with the machines each can go to.',
        tags: ['queue'],
        response: {
          200: ok(Type.Array(ref(QueueEntry), { title: 'Array_of_QueueEntry' })),
          ...errorResponses,
        },
      },
    },
    // The queue answers the same frozen list while nothing it is made of changed (QueueService.list), so
    // its JSON bytes are kept with it; the typed reply knows only the unserialised shape.
    async (_request, reply) => {
      const entries = await queue.list();
      let body = serialisedQueues.get(entries);
      if (!body) {
        body = Buffer.from(
          JSON.stringify(
            entries.map((entry) => ({
              job: jobResponse(entry.job, { progress: null, position: entry.position }),
              machines: entry.machines,
              held: entry.held.map(({ machineId, reason }) => ({ machine_id: machineId, reason })),
            })),
          ),
        );
        serialisedQueues.set(entries, body);
      }
      return reply.type('application/json; charset=utf-8').send(body as never);
    },
  );
};
