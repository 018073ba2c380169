/** What Cura polls: `api/printer` (temperatures and state flags) and `api/job` (progress). */

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Conflict } from '../../errors.js';
import type { MachineStatus } from '../../machines/machine.js';
import { ref } from '../../server/schemas/refs.js';
import { OctoPrintJob, OctoPrintPrinter } from '../schemas.js';
import { type OctoPrintContext, schema, statusOf, targetOf } from './target.js';

export const printerRoutes: FastifyPluginAsyncTypebox<OctoPrintContext> = async (app, context) => {
  app.get(
    '/octoprint/:target/api/printer',
    {
      schema: schema(
        'octoprint_printer',
        'OctoPrint: temperatures and state flags (409 while the machine is offline).',
        ref(OctoPrintPrinter),
      ),
    },
    async (request) => {
      const target = targetOf(context.machines, request.params, request.query);
      const status = await statusOf(context, target);
      const printer = printerOf(status);
      if (!printer.state.flags.operational) {
        // As OctoPrint: 409; Cura, Home Assistant and OctoPod then show the printer as offline.
        throw new Conflict('Printer is not operational');
      }
      return printer;
    },
  );

  app.get(
    '/octoprint/:target/api/job',
    { schema: schema('octoprint_job', 'OctoPrint: the current job and its progress.', ref(OctoPrintJob)) },
    async (request) => {
      const target = targetOf(context.machines, request.params, request.query);
      const status = await statusOf(context, target);
      return jobOf(status, printerOf(status).state.text);
    },
  );
};

/** OctoPrint's printer state from a machine status; the queue always reads as ready (jobs wait there). */
export function printerOf(status: MachineStatus | null): OctoPrintPrinter {
  const state = status?.state.state ?? 'idle';
  const text =
    state === 'running'
      ? 'Printing'
      : state === 'paused'
        ? 'Paused'
        : state === 'offline'
          ? 'Offline'
          : state === 'failed'
            ? 'Error'
            : 'Operational';
  const temperature: OctoPrintPrinter['temperature'] = {};
  for (const [sensor, reading] of Object.entries(status?.temperatures ?? {})) {
    const name =
      sensor === 'bed'
        ? 'bed'
        : sensor === 'extruder'
          ? 'tool0'
          : /^extruder(\d+)$/.exec(sensor)
            ? `tool${sensor.slice(8)}`
            : null;
    if (name) temperature[name] = { actual: reading.current, target: reading.target, offset: 0 };
  }
  const operational = text !== 'Offline' && text !== 'Error';
  return {
    temperature,
    state: {
      text,
      flags: {
        operational,
        paused: text === 'Paused',
        printing: text === 'Printing',
        pausing: false,
        cancelling: false,
        sdReady: false,
        error: text === 'Error',
        ready: text === 'Operational',
        closedOrError: !operational,
      },
    },
  };
}

function jobOf(status: MachineStatus | null, state: string): OctoPrintJob {
  return {
    job: { file: { name: null } },
    progress: { completion: status?.progress ?? null, printTime: null, printTimeLeft: null },
    state,
  };
}
