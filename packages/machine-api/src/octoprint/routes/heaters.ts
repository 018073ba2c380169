/**
 * Heater targets as OctoPrint clients set them: `POST api/printer/tool` (`{"command": "target",
 * "targets": {"tool0": 215}}`) and `POST api/printer/bed` (`{"command": "target", "target": 60}`), through
 * the temperature service (limits `max_tool_temp` / `max_bed_temp` → 400; a printing or offline machine →
 * 409; nothing is sent when refused). Offsets are not applied here, so only an offset of 0 is accepted.
 */

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { BadRequest, Conflict } from '../../errors.js';
import { ref } from '../../server/schemas/refs.js';
import { strictValidatorCompiler } from '../../server/strict-validation.js';
import { OctoPrintBedCommand, OctoPrintToolCommand } from '../schemas/printer.js';
import { type OctoPrintContext, octoPrintErrorResponses, TargetParams, targetOf } from './target.js';

/** Offsets are reported as 0 and never applied; a client asking for another is told so. */
function checkOffsets(offsets: Record<string, number>): void {
  for (const [heater, offset] of Object.entries(offsets)) {
    if (offset !== 0) {
      throw new BadRequest(
        `temperature offsets are not supported (${heater}: ${offset}); set the target instead`,
      );
    }
  }
}

export const heaterRoutes: FastifyPluginAsyncTypebox<OctoPrintContext> = async (app, context) => {
  const machineOf = (params: { target: string }, query: unknown): string => {
    const target = targetOf(context.machines, params, query);
    if (target.kind !== 'machine') throw new Conflict('the farm queue has no heaters; use a machine base');
    return target.machineId;
  };

  app.post(
    '/octoprint/:target/api/printer/tool',
    {
      schema: {
        operationId: 'octoprint_tool_command',
        summary:
          'OctoPrint: `{"command": "target", "targets": {"tool0": 215}}` sets the hot end (204); above `max_tool_temp` → 400; while printing or offline → 409. `offset` accepts only 0.',
        tags: ['octoprint'],
        params: TargetParams,
        body: ref(OctoPrintToolCommand),
        response: { 204: { description: 'set' }, ...octoPrintErrorResponses },
      },
      validatorCompiler: strictValidatorCompiler,
    },
    async (request, reply) => {
      const machineId = machineOf(request.params, request.query);
      const body = request.body;
      if (body.command === 'offset') {
        checkOffsets(body.offsets ?? {});
        return reply.code(204).send();
      }
      const targets = body.targets ?? {};
      const tools = Object.keys(targets);
      if (tools.length !== 1 || tools[0] !== 'tool0') {
        throw new BadRequest(
          `"targets" must name the one tool this service drives, "tool0"; got ${JSON.stringify(tools)}`,
        );
      }
      await context.temperatures.set(machineId, { tool: targets.tool0 as number });
      return reply.code(204).send();
    },
  );

  app.post(
    '/octoprint/:target/api/printer/bed',
    {
      schema: {
        operationId: 'octoprint_bed_command',
        summary:
          'OctoPrint: `{"command": "target", "target": 60}` sets the bed (204); above `max_bed_temp` → 400; while printing or offline → 409. `offset` accepts only 0.',
        tags: ['octoprint'],
        params: TargetParams,
        body: ref(OctoPrintBedCommand),
        response: { 204: { description: 'set' }, ...octoPrintErrorResponses },
      },
      validatorCompiler: strictValidatorCompiler,
    },
    async (request, reply) => {
      const machineId = machineOf(request.params, request.query);
      const body = request.body;
      if (body.command === 'offset') {
        checkOffsets({ bed: body.offset ?? 0 });
        return reply.code(204).send();
      }
      if (body.target === undefined)
        throw new BadRequest('"target" is required with the "target" command (°C)');
      // pyoctoprintapi also sends `"offset": 0` with a target; any other offset is refused above.
      if (body.offset !== undefined) checkOffsets({ bed: body.offset });
      await context.temperatures.set(machineId, { bed: body.target });
      return reply.code(204).send();
    },
  );
};
