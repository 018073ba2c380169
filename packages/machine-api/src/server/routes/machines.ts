/** `GET /machines`, `GET /machines/{id}` and the machine controls `POST /machines/{id}/pause|resume|stop`. */

import { Type } from 'typebox';
import { machineInfo } from '../convert.js';
import { MachineIdParams, MachineInfoResponse, ref } from '../schemas.js';
import { errorResponses, ok, type ServerContext, type TypedApp } from '../types.js';

export function machineRoutes(app: TypedApp, context: ServerContext): void {
  const { machines, statusTimeoutMs } = context;

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
    async () => {
      const statuses = await machines.statuses(machines.machines, statusTimeoutMs);
      return machines.machines.map((entry, index) => machineInfo(machines, entry, statuses[index]!));
    },
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
      const entry = machines.require(request.params.id);
      const [status] = await machines.statuses([entry], statusTimeoutMs);
      return machineInfo(machines, entry, status!);
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
        const [status] = await machines.statuses([entry], statusTimeoutMs);
        return machineInfo(machines, entry, status!);
      },
    );
  }
}
