/** `POST /print`: a design and its `PrintParameters` in, a job that the machine has started out. */

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { BadRequest } from '../../errors.js';
import { receivePrintForm } from '../multipart.js';
import {
  PrintJobResponse,
  type PrintParameters,
  PrintParameters as PrintParametersSchema,
} from '../schemas/print.js';
import { ref, validationSchema } from '../schemas/refs.js';
import { strictValidator } from '../strict-validation.js';
import { errorResponses, ok, type RouteOptions } from '../types.js';

/** What the request body is, for the OpenAPI document (the body is read as a stream, not validated whole). */
const MultipartDesign = Type.Unsafe({ type: 'string', format: 'binary' });

const paramsSchema = validationSchema(PrintParametersSchema);

export const printRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { context }) => {
  app.post(
    '/print',
    {
      schema: {
        operationId: 'print_file',
        summary: 'Print a given file. File must be a sliceable 3D model.',
        tags: ['machines'],
        response: { 200: ok(ref(PrintJobResponse)), ...errorResponses },
      },
      config: {
        swaggerTransform: ({ schema, url }) => ({
          url,
          schema: { ...schema, consumes: ['multipart/form-data'], body: MultipartDesign },
        }),
      },
    },
    async (request, reply) => {
      // A client that goes away before its job reaches the machine cancels it (as the anchor does).
      const clientGone = new AbortController();
      const onClose = () => {
        if (!reply.raw.writableFinished) clientGone.abort();
      };
      reply.raw.once('close', onClose);
      const form = await receivePrintForm(request, {
        uploadDir: context.jobs.uploadDir,
        maxBytes: context.maxUploadBytes,
        maxLineBytes: context.jobs.maxLineBytes,
      });
      try {
        const parameters = printParameters(
          parseParamsPart(form.params, strictValidator(paramsSchema), 'PrintParameters'),
        );
        // A machine of another instance prints what that instance accepts (server/forward.ts).
        const remote = context.forwarder?.remoteFor(parameters.machine_id, request);
        if (remote) {
          await context.forwarder?.relayPrint(request, reply, remote, form);
          return reply;
        }
        const job = await context.jobs.submit(
          form.upload,
          parameters,
          request.actor?.name ?? null,
          clientGone.signal,
        );
        return { job_id: job.id, parameters };
      } finally {
        reply.raw.off('close', onClose);
        await form.discard();
      }
    },
  );
};

/** The `params` part as JSON, validated against its schema (no coercion); `BadRequest` naming the field. */
export function parseParamsPart(
  text: string,
  validate: ((value: unknown) => boolean) & { errors?: { instancePath: string; message?: string }[] | null },
  schemaName: string,
): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new BadRequest(`the "params" part is not valid JSON: ${(error as Error).message}`);
  }
  if (!validate(value)) {
    const first = validate.errors?.[0];
    const field = first?.instancePath ? `${first.instancePath.slice(1).replaceAll('/', '.')} ` : '';
    throw new BadRequest(
      `the "params" part is not valid ${schemaName}: ${field}${first?.message ?? 'is invalid'}`,
    );
  }
  return value;
}

/** Only the known fields are kept and echoed, as the anchor does (unknown keys are ignored). */
function printParameters(value: unknown): PrintParameters {
  const { machine_id, job_name, slicer_configuration } = value as PrintParameters;
  return { machine_id, job_name, ...(slicer_configuration !== undefined ? { slicer_configuration } : {}) };
}
