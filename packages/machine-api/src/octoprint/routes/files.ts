/**
 * Uploads: `api/files/local` (`print=true` prints or queues, otherwise the file is stored) and the
 * `select` command Cura sends after an upload.
 */

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ANONYMOUS } from '../../access/scopes.js';
import { BadRequest } from '../../errors.js';
import { ref } from '../../server/schemas/refs.js';
import { basePath } from '../base-url.js';
import { OctoPrintFileCommand, OctoPrintUploadResult } from '../schemas/files.js';
import { storedName } from '../stored-files.js';
import { receiveOctoPrintUpload } from '../upload-form.js';
import { type OctoPrintContext, octoPrintErrorResponses, TargetParams, targetOf } from './target.js';

const FileParams = Type.Object({
  target: Type.String(),
  '*': Type.String({ description: 'The stored path.' }),
});
const MultipartFile = Type.Unsafe({ type: 'string', format: 'binary' });

export const fileRoutes: FastifyPluginAsyncTypebox<OctoPrintContext> = async (app, context) => {
  app.post(
    '/octoprint/:target/api/files/local',
    {
      schema: {
        operationId: 'octoprint_upload',
        summary:
          'OctoPrint: upload a file (multipart `file`, optional `path`, `select`, `print`); `print=true` prints or queues it, otherwise it is stored for `POST /files/{name}/print`.',
        tags: ['octoprint'],
        params: TargetParams,
        response: {
          201: {
            description: 'stored (and printing or queued with `print=true`)',
            content: { 'application/json': { schema: ref(OctoPrintUploadResult) } },
          },
          ...octoPrintErrorResponses,
        },
      },
      config: {
        swaggerTransform: ({ schema: routeSchema, url }) => ({
          url,
          schema: { ...routeSchema, consumes: ['multipart/form-data'], body: MultipartFile },
        }),
      },
    },
    async (request, reply) => {
      const target = targetOf(context.machines, request.params, request.query);
      const form = await receiveOctoPrintUpload(request, {
        uploadDir: context.uploadDir,
        maxBytes: context.maxUploadBytes,
      });
      try {
        const name = storedName(form.path, form.upload.fileName);
        const owner = request.actor?.name ?? null;
        let jobId: string | undefined;
        if (form.print) {
          // Printing needs a copy the runner can take over; the stored file stays for a reprint.
          const stored = await context.files.keep(form.upload, name, target, owner);
          const job = await context.files.print(stored.name, request.actor ?? ANONYMOUS, context.submit);
          jobId = job.id;
        } else {
          await context.files.keep(form.upload, name, target, owner);
        }
        const location = `${request.protocol}://${request.headers.host ?? 'localhost'}${basePath(target)}api/files/local/${name.split('/').map(encodeURIComponent).join('/')}`;
        reply.code(201).header('location', location);
        return {
          done: true,
          effectiveSelect: form.print || form.select,
          effectivePrint: form.print,
          files: {
            local: {
              name: name.split('/').pop() ?? name,
              path: name,
              origin: 'local' as const,
              refs: { resource: location },
            },
          },
          ...(jobId ? { job_id: jobId } : {}),
        };
      } finally {
        await form.discard();
      }
    },
  );

  app.post(
    '/octoprint/:target/api/files/local/*',
    {
      schema: {
        operationId: 'octoprint_file_command',
        summary:
          'OctoPrint: `{"command": "select", "print": true}` prints a stored file (Cura sends it after an upload).',
        tags: ['octoprint'],
        params: FileParams,
        body: ref(OctoPrintFileCommand),
        response: { 204: { description: 'done' }, ...octoPrintErrorResponses },
      },
    },
    async (request, reply) => {
      targetOf(context.machines, request.params, request.query);
      const name = request.params['*'];
      if (request.body.command !== 'select') {
        throw new BadRequest(
          `unsupported file command "${request.body.command}"; only "select" is supported`,
        );
      }
      await context.files.get(name);
      if (request.body.print === true) {
        await context.files.print(name, request.actor ?? ANONYMOUS, context.submit);
      }
      return reply.code(204).send();
    },
  );
};
