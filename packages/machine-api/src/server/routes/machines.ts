/**
 * `GET /machines`, `GET /machines/{id}`, the machine controls `POST /machines/{id}/pause|resume|stop` and
 * the bed confirmation `POST /machines/{id}/clear`. The plugin is a list of route registrations, each a
 * schema and a few lines of handler, which is why it runs a little over 100 lines.
 */

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ObservedMachine } from '../../machines/observer.js';
import type { RegisteredMachine } from '../../machines/registry.js';
import { machineInfo } from '../convert.js';
import { MachineListBody } from '../machine-list.js';
import { remoteMachineInfo } from '../remote-machines.js';
import { MachineIdParams, MachineInfoResponse } from '../schemas/machines.js';
import { ref } from '../schemas/refs.js';
import { errorResponses, ok, type RouteOptions } from '../types.js';

/**
 * The machine routes (`/machines…`: list, info, controls).
 *
 * Long by design: one registration per route of the area, each a schema and a short handler that calls a service.
 */
export const machineRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { context }) => {
  const { machines, observer, jobs, cameras, instance, farm, spools } = context;
  const list = new MachineListBody(machines, observer, jobs, cameras, instance, farm, spools);
  /** A local machine's answer, tagged with this instance on a farm. */
  const localInfo = (entry: RegisteredMachine, observed: ObservedMachine) => {
    const info = machineInfo(
      machines,
      entry,
      observed.status,
      observed,
      jobs.currentJob(entry.id),
      cameras.status(entry.id),
      undefined,
      spools.configured ? spools.of(entry.id) : null,
    );
    if (instance !== null) info.instance = instance;
    return info;
  };

  app.get(
    '/machines',
    {
      schema: {
        operationId: 'get_machines',
        summary: 'List available machines and their statuses',
        tags: ['machines'],
        response: {
          200: ok(Type.Array(ref(MachineInfoResponse), { title: 'Array_of_MachineInfoResponse' })),
          ...errorResponses,
        },
      },
    },
    // Served from the observer's snapshots as JSON bytes kept between requests (see machine-list.ts); the
    // typed reply knows only the unserialised shape.
    async (_request, reply) =>
      reply.type('application/json; charset=utf-8').send((await list.body()) as never),
  );

  app.get(
    '/machines/:id',
    {
      schema: {
        operationId: 'get_machine',
        summary: 'Get the status of a specific machine',
        tags: ['machines'],
        params: MachineIdParams,
        response: { 200: ok(ref(MachineInfoResponse)), ...errorResponses },
      },
    },
    async (request) => {
      // A machine of another instance is answered from the farm mirror (its instance's last write, or
      // offline when that instance is dead): reading works whether or not its instance answers.
      const remote = machines.get(request.params.id) ? undefined : farm.get(request.params.id);
      if (remote) return remoteMachineInfo(remote);
      const entry = machines.require(request.params.id);
      // One machine is read now (joining a read under way, bounded by its own status timeout): a client
      // asking about one printer wants its progress of this moment, not of the last poll; the list is
      // where the snapshot pays.
      const observed = await observer.refresh(entry.id);
      return localInfo(entry, observed);
    },
  );

  app.post(
    '/machines/:id/clear',
    {
      schema: {
        operationId: 'clear_machine',
        summary:
          'Confirm that the bed is clear after a print, so the machine is ready for the next job (on Klipper also resets the finished file). 409 while it prints; 409 MachineRejected when it failed.',
        tags: ['machines'],
        params: MachineIdParams,
        response: { 200: ok(ref(MachineInfoResponse)), ...errorResponses },
      },
    },
    async (request) => {
      const entry = machines.require(request.params.id);
      const observed = await context.jobs.clear(entry.id);
      return localInfo(entry, observed);
    },
  );

  const controls = [
    { action: 'pause', summary: 'Pause the print the machine is running.' },
    { action: 'resume', summary: 'Resume a paused print.' },
    { action: 'stop', summary: 'Stop the print the machine is running; its job ends as cancelled.' },
  ] as const;
  for (const { action, summary } of controls) {
    app.post(
      `/machines/:id/${action}`,
      {
        schema: {
          operationId: `${action}_machine`,
          summary,
          tags: ['machines'],
          params: MachineIdParams,
          response: { 200: ok(ref(MachineInfoResponse)), ...errorResponses },
        },
      },
      async (request) => {
        const entry = machines.require(request.params.id);
        await entry.machine[action]();
        const observed = await observer.refresh(entry.id);
        return localInfo(entry, observed);
      },
    );
  }
};
