/**
 * What Cura, Home Assistant and the apps poll: `api/printer` (temperatures and state flags; 409 while the
 * machine is not operational, as OctoPrint) and `api/job` (the job and its progress; 200 even offline),
 * and the job commands Home Assistant's buttons and the apps send (`POST api/job`: pause, resume, cancel)
 * through the same machine controls as `POST /machines/{id}/pause|resume|stop`.
 */

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Conflict } from '../../errors.js';
import { ref } from '../../server/schemas/refs.js';
import { strictValidatorCompiler } from '../../server/strict-validation.js';
import { OctoPrintJob, OctoPrintJobCommand, OctoPrintPrinter } from '../schemas/printer.js';
import { jobOf, printerOf } from '../state.js';
import {
  type OctoPrintContext,
  octoPrintErrorResponses,
  schema,
  statusOf,
  TargetParams,
  targetOf,
} from './target.js';

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
      const printer = printerOf(await statusOf(context, target));
      // As OctoPrint: 409; Cura, Home Assistant and OctoPod then show the printer as offline.
      if (!printer.state.flags.operational) throw new Conflict('Printer is not operational');
      return printer;
    },
  );

  app.get(
    '/octoprint/:target/api/job',
    {
      schema: schema(
        'octoprint_job',
        'OctoPrint: the current job and its progress (200 with state `Offline` while the machine is).',
        ref(OctoPrintJob),
      ),
    },
    async (request) => {
      const target = targetOf(context.machines, request.params, request.query);
      const status = await statusOf(context, target);
      const job = target.kind === 'machine' ? await context.currentJob(target.machineId) : null;
      return jobOf(status, job);
    },
  );

  app.post(
    '/octoprint/:target/api/job',
    {
      schema: {
        operationId: 'octoprint_job_command',
        summary:
          'OctoPrint: `{"command": "pause", "action": "pause|resume|toggle"}` or `{"command": "cancel"}` → 204, through the machine controls of `POST /machines/{id}/pause|resume|stop` (scope `control`); 409 when the machine is not in a state for it.',
        tags: ['octoprint'],
        params: TargetParams,
        body: ref(OctoPrintJobCommand),
        response: { 204: { description: 'done' }, ...octoPrintErrorResponses },
      },
      validatorCompiler: strictValidatorCompiler,
    },
    async (request, reply) => {
      const target = targetOf(context.machines, request.params, request.query);
      if (target.kind !== 'machine') {
        throw new Conflict('the farm queue runs no job itself; send job commands to a machine base');
      }
      const { command, action = 'toggle' } = request.body;
      if (command === 'start' || command === 'restart') {
        throw new Conflict(
          `"${command}" needs a selected file, which this service does not keep; upload with print=true or use POST /files/{name}/print`,
        );
      }
      const entry = context.machines.require(target.machineId);
      if (command === 'cancel') {
        await entry.machine.stop();
      } else if (action === 'pause' || action === 'resume') {
        await entry.machine[action]();
      } else {
        const state = (await statusOf(context, target))?.state.state;
        if (state === 'paused') await entry.machine.resume();
        else if (state === 'running') await entry.machine.pause();
        else throw new Conflict('Printer is neither printing nor paused, nothing to toggle');
      }
      return reply.code(204).send();
    },
  );
};
