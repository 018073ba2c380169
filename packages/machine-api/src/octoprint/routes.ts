/**
 * The OctoPrint-compatible subset slicers speak, under a base URL per target (base-url.ts). Handshake:
 * `api/version`, `api/server`, `api/settings`, `api/login`, `api/currentuser`, `api/printerprofiles`;
 * status polled by Cura: `api/printer`, `api/job`; upload: `api/files/local` (`print=true` prints or
 * queues, otherwise the file is stored), and the `select` command Cura sends after an upload.
 */

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type TSchema, Type } from 'typebox';
import { ANONYMOUS } from '../access/scopes.js';
import { BadRequest } from '../errors.js';
import type { MachineStatus } from '../machines/machine.js';
import type { MachineRegistry } from '../machines/registry.js';
import { ref } from '../server/schemas/refs.js';
import { errorResponses, ok } from '../server/types.js';
import { basePath, type OctoPrintTarget, parseTarget } from './base-url.js';
import {
  OctoPrintFileCommand,
  OctoPrintJob,
  OctoPrintPrinter,
  OctoPrintPrinterProfiles,
  OctoPrintServer,
  OctoPrintSettings,
  OctoPrintUploadResult,
  OctoPrintUser,
  OctoPrintVersion,
} from './schemas.js';
import { type StoredFiles, type SubmitPrint, storedName } from './stored-files.js';
import { receiveOctoPrintUpload } from './upload-form.js';

export interface OctoPrintContext {
  machines: MachineRegistry;
  statusTimeoutMs: number;
  files: StoredFiles;
  submit: SubmitPrint;
  uploadDir: string;
  maxUploadBytes: number;
  version: string;
}

/** The OctoPrint version slicers are told; 1.1.0 is the least PrusaSlicer accepts. */
const OCTOPRINT_SERVER = '1.10.0';

const TargetParams = Type.Object({
  target: Type.String({
    description: 'A machine id, or `queue` for the farm queue (constraints in the query).',
  }),
});
const FileParams = Type.Object({
  target: Type.String(),
  '*': Type.String({ description: 'The stored path.' }),
});
const MultipartFile = Type.Unsafe({ type: 'string', format: 'binary' });

/** The schema of an OctoPrint operation answering `response` with 200. */
function schema<T extends TSchema>(operationId: string, summary: string, response: T) {
  return {
    operationId,
    summary,
    tags: ['octoprint'],
    params: TargetParams,
    response: { 200: ok(response), ...errorResponses },
  };
}

export const octoPrintRoutes: FastifyPluginAsyncTypebox<OctoPrintContext> = async (app, context) => {
  const { machines } = context;

  /** The target of the request; 404 for a machine that is not configured. */
  const targetOf = (params: { target: string }, query: unknown): OctoPrintTarget => {
    const target = parseTarget(params.target, (query ?? {}) as Record<string, unknown>);
    if (target.kind === 'machine') machines.require(target.machineId);
    return target;
  };
  const statusOf = async (target: OctoPrintTarget): Promise<MachineStatus | null> => {
    if (target.kind !== 'machine') return null;
    const [status] = await machines.statuses([machines.require(target.machineId)], context.statusTimeoutMs);
    return status ?? null;
  };

  app.get(
    '/octoprint/:target/api/version',
    {
      schema: schema(
        'octoprint_version',
        "OctoPrint: API and server version (the slicers' connection test).",
        ref(OctoPrintVersion),
      ),
    },
    async (request) => {
      targetOf(request.params, request.query);
      return { api: '0.1', server: OCTOPRINT_SERVER, text: `OctoPrint (machine-api ${context.version})` };
    },
  );

  app.get(
    '/octoprint/:target/api/server',
    { schema: schema('octoprint_server', 'OctoPrint: server version and safe mode.', ref(OctoPrintServer)) },
    async (request) => {
      targetOf(request.params, request.query);
      return { server: OCTOPRINT_SERVER, safemode: null };
    },
  );

  app.get(
    '/octoprint/:target/api/settings',
    {
      schema: schema(
        'octoprint_settings',
        'OctoPrint: the settings Cura reads when it tests a key.',
        ref(OctoPrintSettings),
      ),
    },
    async (request) => {
      targetOf(request.params, request.query);
      return {
        api: { allowCrossOrigin: false },
        feature: { sdSupport: false },
        webcam: { webcamEnabled: false, streamUrl: '' },
        plugins: {},
      };
    },
  );

  const user = (request: { actor: { name: string | null; scopes: ReadonlySet<string> } | null }) => {
    const actor = request.actor;
    const admin = actor ? actor.scopes.has('admin') : true;
    return {
      name: actor?.name ?? '_api',
      active: true,
      admin,
      user: true,
      groups: admin ? ['admins', 'users'] : ['users'],
      permissions: [...(actor?.scopes ?? [])],
    };
  };
  app.post(
    '/octoprint/:target/api/login',
    {
      schema: schema(
        'octoprint_login',
        "OctoPrint: passive login; answers the key's name.",
        ref(OctoPrintUser),
      ),
    },
    async (request) => {
      targetOf(request.params, request.query);
      return user(request);
    },
  );
  app.get(
    '/octoprint/:target/api/currentuser',
    {
      schema: schema('octoprint_current_user', 'OctoPrint: the user the key stands for.', ref(OctoPrintUser)),
    },
    async (request) => {
      targetOf(request.params, request.query);
      return user(request);
    },
  );

  app.get(
    '/octoprint/:target/api/printerprofiles',
    {
      schema: schema(
        'octoprint_printer_profiles',
        'OctoPrint: one current printer profile.',
        ref(OctoPrintPrinterProfiles),
      ),
    },
    async (request) => {
      const target = targetOf(request.params, request.query);
      const entry = target.kind === 'machine' ? machines.require(target.machineId) : null;
      const identity = entry?.machine.identity();
      return {
        profiles: {
          _default: {
            id: '_default',
            name: entry ? entry.id : 'queue',
            model: identity
              ? [identity.makeModel.manufacturer, identity.makeModel.model].filter(Boolean).join(' ')
              : 'machine-api farm queue',
            color: 'default',
            current: true,
            default: true,
            heatedBed: true,
            heatedChamber: false,
          },
        },
      };
    },
  );

  app.get(
    '/octoprint/:target/api/printer',
    {
      schema: schema(
        'octoprint_printer',
        'OctoPrint: temperatures and state flags (409 while the machine is offline).',
        ref(OctoPrintPrinter),
      ),
    },
    async (request, reply) => {
      const target = targetOf(request.params, request.query);
      const status = await statusOf(target);
      const printer = printerOf(status);
      if (!printer.state.flags.operational) {
        // OctoPrint answers 409 in plain text here; Cura then shows the printer as offline.
        return reply
          .code(409)
          .type('text/plain; charset=utf-8')
          .send('Printer is not operational' as never);
      }
      return printer;
    },
  );

  app.get(
    '/octoprint/:target/api/job',
    { schema: schema('octoprint_job', 'OctoPrint: the current job and its progress.', ref(OctoPrintJob)) },
    async (request) => {
      const target = targetOf(request.params, request.query);
      const status = await statusOf(target);
      return jobOf(status, printerOf(status).state.text);
    },
  );

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
          ...errorResponses,
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
      const target = targetOf(request.params, request.query);
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
        response: { 204: { description: 'done' }, ...errorResponses },
      },
    },
    async (request, reply) => {
      targetOf(request.params, request.query);
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
