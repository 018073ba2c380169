/** `GET /jobs`, `GET|PATCH /jobs/{id}`, `POST /jobs/{id}/cancel`, `POST /jobs/{id}/requeue`. */

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { BadRequest } from '../../errors.js';
import type { Job as JobRecord } from '../../jobs/job.js';
import { jobResponse } from '../convert.js';
import { Job, JobIdParams, JobListQuery } from '../schemas/jobs.js';
import { JobChange } from '../schemas/queue.js';
import { ref, validationSchema } from '../schemas/refs.js';
import { strictValidatorCompiler } from '../strict-validation.js';
import { errorResponses, ok, type RouteOptions } from '../types.js';

export const jobRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { context }) => {
  const { jobs, queue } = context;
  const view = (job: JobRecord) =>
    jobResponse(job, { progress: jobs.progressOf(job), position: queue.positionOf(job.id) });

  app.get(
    '/jobs',
    {
      schema: {
        operationId: 'list_jobs',
        summary: 'List print jobs, most recent first.',
        tags: ['jobs'],
        querystring: JobListQuery,
        response: { 200: ok(Type.Array(ref(Job), { title: 'Array_of_Job' })), ...errorResponses },
      },
    },
    async (request) => {
      const { machine_id, status, limit, created_after, created_before } = request.query;
      const list = await jobs.list({
        machineId: machine_id,
        status,
        createdAfter: instant('created_after', created_after),
        createdBefore: instant('created_before', created_before),
        limit: limit ?? 100,
      });
      return list.map(view);
    },
  );

  app.get(
    '/jobs/:id',
    {
      schema: {
        operationId: 'get_job',
        summary: 'Get a print job and what happened to it.',
        tags: ['jobs'],
        params: JobIdParams,
        response: { 200: ok(ref(Job)), ...errorResponses },
      },
    },
    async (request) => view(await jobs.get(request.params.id)),
  );

  app.patch(
    '/jobs/:id',
    {
      schema: {
        operationId: 'change_job',
        summary: 'Change the priority or the constraints of a job waiting in the queue.',
        tags: ['queue'],
        params: JobIdParams,
        body: validationSchema(JobChange),
        response: { 200: ok(ref(Job)), ...errorResponses },
      },
      validatorCompiler: strictValidatorCompiler,
      config: {
        swaggerTransform: ({ schema, url }) => ({ url, schema: { ...schema, body: ref(JobChange) } }),
      },
    },
    async (request) => {
      const body = request.body as { priority?: number; constraints?: JobRecord['constraints'] };
      const change = {
        ...(body.priority !== undefined ? { priority: body.priority } : {}),
        ...(body.constraints ? { constraints: body.constraints } : {}),
      };
      return view(await queue.change(request.params.id, change, request.actor ?? undefined));
    },
  );

  app.post(
    '/jobs/:id/cancel',
    {
      schema: {
        operationId: 'cancel_job',
        summary:
          'Cancel a job that has not finished: takes it out of the queue, stops its preparation, or stops the machine printing it.',
        tags: ['jobs'],
        params: JobIdParams,
        response: { 200: ok(ref(Job)), ...errorResponses },
      },
    },
    async (request) => view(await queue.cancel(request.params.id, request.actor ?? undefined)),
  );

  app.post(
    '/jobs/:id/requeue',
    {
      schema: {
        operationId: 'requeue_job',
        summary: 'Put a failed or cancelled queue job back in the queue (at the end of its priority).',
        tags: ['queue'],
        params: JobIdParams,
        response: { 200: ok(ref(Job)), ...errorResponses },
      },
    },
    async (request) => view(await queue.requeue(request.params.id, request.actor ?? undefined)),
  );
};

/** RFC 3339 date-time (with `T`, seconds and an offset) as the store's UTC ISO form; 400 naming `field` otherwise. */
export function instant(field: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;
  const at = rfc3339.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(at)) {
    throw new BadRequest(
      `${field}: expected an RFC 3339 date-time such as 2026-11-24T08:00:00Z, got ${JSON.stringify(value)}`,
    );
  }
  return new Date(at).toISOString();
}
