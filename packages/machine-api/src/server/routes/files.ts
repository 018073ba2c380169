/** `GET /files`, `POST /files/{name}/print`, `DELETE /files/{name}`: files a slicer uploaded for later. */

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ANONYMOUS } from '../../access/scopes.js';
import { StoredFileInfo } from '../../octoprint/schemas/files.js';
import type { StoredFile } from '../../octoprint/stored-files.js';
import { jobResponse } from '../convert.js';
import { Job } from '../schemas/jobs.js';
import { ref } from '../schemas/refs.js';
import { errorResponses, ok, type RouteOptions } from '../types.js';

const FileNameParams = Type.Object({
  name: Type.String({ description: 'The stored name (`path/name.gcode`, URL-encoded: `%2F` for `/`).' }),
});

export const fileRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { context }) => {
  const { files } = context;

  app.get(
    '/files',
    {
      schema: {
        operationId: 'list_files',
        summary: 'Files uploaded from a slicer without printing, most recent first.',
        tags: ['files'],
        response: {
          200: ok(Type.Array(ref(StoredFileInfo), { title: 'Array_of_StoredFile' })),
          ...errorResponses,
        },
      },
    },
    async () => (await files.list()).map(storedFileInfo),
  );

  app.post(
    '/files/:name/print',
    {
      schema: {
        operationId: 'print_stored_file',
        summary: 'Print a stored file on the machine (or through the queue) it was uploaded for.',
        tags: ['files'],
        params: FileNameParams,
        response: { 200: ok(ref(Job)), ...errorResponses },
      },
    },
    async (request) => {
      const job = await files.print(request.params.name, request.actor ?? ANONYMOUS, context.submit);
      return jobResponse(job, {
        progress: context.jobs.progressOf(job),
        position: context.queue.positionOf(job.id),
      });
    },
  );

  app.delete(
    '/files/:name',
    {
      schema: {
        operationId: 'delete_stored_file',
        summary: 'Remove a stored file (a `print` key: only its own).',
        tags: ['files'],
        params: FileNameParams,
        response: { 204: { description: 'removed' }, ...errorResponses },
      },
    },
    async (request, reply) => {
      await files.remove(request.params.name, request.actor ?? ANONYMOUS);
      return reply.code(204).send();
    },
  );
};

function storedFileInfo(file: StoredFile) {
  return {
    name: file.name,
    size: file.size,
    machine_id: file.target.kind === 'machine' ? file.target.machineId : null,
    queue_constraints: file.target.kind === 'queue' ? { ...file.target.constraints } : null,
    ...(file.owner !== null ? { owner: file.owner } : {}),
    created_at: file.createdAt,
  };
}
