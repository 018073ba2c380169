/**
 * Heater targets: `POST /machines/{id}/temperature` (a preset or explicit targets for one machine),
 * `POST /machines/preheat` (a preset for many) and `GET /presets` (the configured presets, for the dashboard's buttons). Both call the `TemperatureService`.
 */

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { BadRequest } from '../../errors.js';
import type { HeaterTargets } from '../../machines/machine.js';
import type { PreheatSelection } from '../../temperature/service.js';
import { machineInfo } from '../convert.js';
import { preheatFarm } from '../farm-preheat.js';
import { MachineIdParams, MachineInfoResponse } from '../schemas/machines.js';
import { ref, validationSchema } from '../schemas/refs.js';
import {
  PreheatRequest,
  PreheatResult,
  TemperaturePresetInfo,
  TemperatureRequest,
} from '../schemas/temperature.js';
import { strictValidatorCompiler } from '../strict-validation.js';
import { errorResponses, ok, type RouteOptions } from '../types.js';

export const temperatureRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { context }) => {
  const { machines, observer, jobs, cameras, temperatures } = context;

  app.get(
    '/presets',
    {
      schema: {
        operationId: 'list_temperature_presets',
        summary: 'The temperature presets of the configuration (`[presets.<name>]`), sorted by name.',
        tags: ['machines'],
        response: {
          200: ok(Type.Array(ref(TemperaturePresetInfo), { title: 'Array_of_TemperaturePreset' })),
          ...errorResponses,
        },
      },
    },
    async () => temperatures.presets(),
  );

  app.post(
    '/machines/preheat',
    {
      schema: {
        operationId: 'preheat_machines',
        summary:
          'Apply a temperature preset to several machines: the named ones, or every machine with a material loaded. Machines that print (or cannot be heated) are skipped and named with the reason; the others are heated.',
        tags: ['machines'],
        body: validationSchema(PreheatRequest),
        response: { 200: ok(ref(PreheatResult)), ...errorResponses },
      },
      validatorCompiler: strictValidatorCompiler,
      config: {
        swaggerTransform: ({ schema, url }) => ({ url, schema: { ...schema, body: ref(PreheatRequest) } }),
      },
    },
    async (request) => {
      const body = request.body as { preset: string; machines?: string[]; material?: string };
      return preheatFarm(context, request, body.preset, selectionOf(body));
    },
  );

  app.post(
    '/machines/:id/temperature',
    {
      schema: {
        operationId: 'set_machine_temperature',
        summary:
          'Set the hot-end and bed targets of a machine that is not printing, from a preset or explicitly. 400 above its max_tool_temp / max_bed_temp; 409 while it prints, when it is offline or cannot be commanded.',
        tags: ['machines'],
        params: MachineIdParams,
        body: validationSchema(TemperatureRequest),
        response: { 200: ok(ref(MachineInfoResponse)), ...errorResponses },
      },
      validatorCompiler: strictValidatorCompiler,
      config: {
        swaggerTransform: ({ schema, url }) => ({
          url,
          schema: { ...schema, body: ref(TemperatureRequest) },
        }),
      },
    },
    async (request) => {
      const entry = machines.require(request.params.id);
      const body = request.body as { preset?: string; tool?: number; bed?: number };
      await temperatures.set(entry.id, targetsOf(body, temperatures.preset.bind(temperatures)));
      const observed = await observer.refresh(entry.id);
      const info = machineInfo(
        machines,
        entry,
        observed.status,
        observed,
        jobs.currentJob(entry.id),
        cameras.status(entry.id),
        undefined,
        context.spools.configured ? context.spools.of(entry.id) : null,
      );
      if (context.instance !== null) info.instance = context.instance;
      return info;
    },
  );
};

/** `machines` or `material`, exactly one of them. */
function selectionOf(body: { machines?: string[]; material?: string }): PreheatSelection {
  if ((body.machines === undefined) === (body.material === undefined))
    throw new BadRequest('expected either "machines" (a list of machine ids) or "material", not both');
  return body.machines !== undefined ? { machines: body.machines } : { material: body.material as string };
}

/** A preset by name, or the explicit targets; both at once is a contradiction the client must resolve. */
function targetsOf(
  body: { preset?: string; tool?: number; bed?: number },
  preset: (name: string) => HeaterTargets,
): HeaterTargets {
  if (body.preset !== undefined) {
    if (body.tool !== undefined || body.bed !== undefined)
      throw new BadRequest('expected either "preset" or "tool"/"bed", not both');
    return preset(body.preset);
  }
  return {
    ...(body.tool !== undefined ? { tool: body.tool } : {}),
    ...(body.bed !== undefined ? { bed: body.bed } : {}),
  };
}
