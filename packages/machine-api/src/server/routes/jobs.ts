/** `GET /jobs`, `GET /jobs/{id}`, `POST /jobs/{id}/cancel`. */

import { Type } from 'typebox';
import { jobResponse } from '../convert.js';
import { Job, JobIdParams, JobListQuery, ref } from '../schemas.js';
import { errorResponses, ok, type ServerContext, type TypedApp } from '../types.js';

export function jobRoutes(app: TypedApp, context: ServerContext): void {
  const { jobs } = context;

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
      const { machine_id, status, limit } = request.query;
      const list = await jobs.list({ machineId: machine_id, status, limit: limit ?? 100 });
      return list.map(jobResponse);
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
    async (request) => jobResponse(await jobs.get(request.params.id)),
  );

  app.post(
    '/jobs/:id/cancel',
    {
      schema: {
        operationId: 'cancel_job',
        summary: 'Cancel a job that has not finished: stops its preparation, or the machine printing it.',
        tags: ['jobs'],
        params: JobIdParams,
        response: { 200: ok(ref(Job)), ...errorResponses },
      },
    },
    async (request) => jobResponse(await jobs.cancel(request.params.id)),
  );
}
