/**
 * What OctoPrint apps (OctoPod, OctoApp) read when they start, with honest values: `api/connection` (the
 * service keeps the connection to each machine itself: it reads as connected while the machine answers,
 * `connect` is accepted and changes nothing, `disconnect` is refused), `api/system/commands` (none: this
 * service never restarts or shuts down its host for an app), and `api/files` (the files slicers stored for
 * this base without printing them).
 */

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { BadRequest, NotFound } from '../../errors.js';
import { ref } from '../../server/schemas/refs.js';
import { strictValidatorCompiler } from '../../server/strict-validation.js';
import { basePath, targetKey } from '../base-url.js';
import { OctoPrintConnection, OctoPrintConnectionCommand, OctoPrintSystemCommands } from '../schemas/apps.js';
import { OctoPrintFiles } from '../schemas/files.js';
import { printerStateOf } from '../state.js';
import {
  type OctoPrintContext,
  octoPrintErrorResponses,
  schema,
  statusOf,
  TargetParams,
  targetOf,
} from './target.js';

const SystemCommandParams = Type.Object({
  target: Type.String(),
  source: Type.String({ description: '`core` or `custom`.' }),
  action: Type.String(),
});

/**
 * What Home Assistant and the phone apps call under an OctoPrint base.
 *
 * Long by design: one registration per route of the area, each a schema and a short handler that calls a service.
 */
export const appRoutes: FastifyPluginAsyncTypebox<OctoPrintContext> = async (app, context) => {
  const { machines } = context;

  app.get(
    '/octoprint/:target/api/connection',
    {
      schema: schema(
        'octoprint_connection',
        "OctoPrint: the printer connection, which this service keeps itself (state as `api/printer`'s).",
        ref(OctoPrintConnection),
      ),
    },
    async (request) => {
      const target = targetOf(machines, request.params, request.query);
      const port = target.kind === 'machine' ? target.machineId : 'queue';
      const state = printerStateOf(await statusOf(context, target)).text;
      return {
        current: {
          state: state === 'Offline' ? 'Closed' : state,
          port: state === 'Offline' ? null : port,
          baudrate: null,
          printerProfile: '_default',
        },
        options: {
          ports: [port],
          baudrates: [],
          printerProfiles: [{ id: '_default', name: port }],
          portPreference: port,
          baudratePreference: null,
          printerProfilePreference: '_default',
          autoconnect: true,
        },
      };
    },
  );

  app.post(
    '/octoprint/:target/api/connection',
    {
      schema: {
        operationId: 'octoprint_connection_command',
        summary:
          'OctoPrint: `connect` → 204 (the service is connected already, or retrying by itself); `disconnect` and `fake_ack` → 400 (the service keeps its machines connected).',
        tags: ['octoprint'],
        params: TargetParams,
        body: ref(OctoPrintConnectionCommand),
        response: { 204: { description: 'connected' }, ...octoPrintErrorResponses },
      },
      validatorCompiler: strictValidatorCompiler,
    },
    async (request, reply) => {
      targetOf(machines, request.params, request.query);
      if (request.body.command !== 'connect') {
        throw new BadRequest(
          `"${request.body.command}" is not available: machine-api keeps the connection to each machine itself`,
        );
      }
      return reply.code(204).send();
    },
  );

  app.get(
    '/octoprint/:target/api/system/commands',
    {
      schema: schema(
        'octoprint_system_commands',
        'OctoPrint: system commands; none (the service does not restart or shut down its host for apps).',
        ref(OctoPrintSystemCommands),
      ),
    },
    async (request) => {
      targetOf(machines, request.params, request.query);
      return { core: [], custom: [] };
    },
  );

  app.post(
    '/octoprint/:target/api/system/commands/:source/:action',
    {
      schema: {
        operationId: 'octoprint_system_command',
        summary:
          "OctoPrint: run a system command; there are none, so 404 (Home Assistant's restart, reboot and shutdown buttons report a failure).",
        tags: ['octoprint'],
        params: SystemCommandParams,
        response: { 204: { description: 'never: there are no system commands' }, ...octoPrintErrorResponses },
      },
    },
    async (request) => {
      targetOf(machines, request.params, request.query);
      const { source, action } = request.params;
      throw new NotFound(`Command ${source}:${action} not found: machine-api runs no system commands`);
    },
  );

  app.get(
    '/octoprint/:target/api/files',
    {
      schema: schema(
        'octoprint_files',
        'OctoPrint: the files slicers stored for this base without printing (print one with `POST /files/{name}/print`).',
        ref(OctoPrintFiles),
      ),
    },
    async (request) => {
      const target = targetOf(machines, request.params, request.query);
      const key = targetKey(target);
      const host = `${request.protocol}://${request.headers.host ?? 'localhost'}${basePath(target)}`;
      const files = (await context.files.list())
        .filter((file) => targetKey(file.target) === key)
        .map((file) => ({
          name: file.name.split('/').pop() ?? file.name,
          path: file.name,
          display: file.name.split('/').pop() ?? file.name,
          origin: 'local' as const,
          type: 'machinecode',
          typePath: ['machinecode', 'gcode'],
          size: file.size,
          date: Math.floor(Date.parse(file.createdAt) / 1000),
          refs: {
            resource: `${host}api/files/local/${file.name.split('/').map(encodeURIComponent).join('/')}`,
          },
        }));
      return { files, free: null, total: null };
    },
  );
};
