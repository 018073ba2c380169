/** `PUT /machines/{id}/spool`: which Spoolman spool a machine (or an AMS slot) prints from. */

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { machineSpools } from '../convert.js';
import { MachineIdParams } from '../schemas/machines.js';
import { ref, validationSchema } from '../schemas/refs.js';
import { MachineSpools, SpoolRequest } from '../schemas/spools.js';
import { strictValidatorCompiler } from '../strict-validation.js';
import { errorResponses, ok, type RouteOptions } from '../types.js';

export const spoolRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { context }) => {
  const { spools } = context;

  app.put(
    '/machines/:id/spool',
    {
      schema: {
        operationId: 'set_machine_spool',
        summary:
          'Assign the Spoolman spool the machine prints from (`{"spool_id": 12}`; `null` unassigns; `{"slot": 2, "spool_id": 12}` for a Bambu AMS slot). The machine\'s filament follows the spool; its prints\' use is reported to Spoolman; the queue starts no job the spool cannot finish. 400 `UnknownSpool` for a spool Spoolman does not have, 409 `SpoolmanNotConfigured` without `[spoolman]`, 503 `SpoolmanUnavailable` when Spoolman cannot be asked.',
        tags: ['machines'],
        params: MachineIdParams,
        body: validationSchema(SpoolRequest),
        response: { 200: ok(ref(MachineSpools)), ...errorResponses },
      },
      validatorCompiler: strictValidatorCompiler,
      config: {
        swaggerTransform: ({ schema, url }) => ({ url, schema: { ...schema, body: ref(SpoolRequest) } }),
      },
    },
    async (request) => {
      const body = request.body as SpoolRequest;
      const machineId = context.machines.require(request.params.id).id;
      const assigned = await spools.assign(machineId, body.slot ?? null, body.spool_id);
      return machineSpools(machineId, assigned);
    },
  );
};
