/**
 * The OctoPrint handshake slicers run before an upload: `api/version`, `api/server`, `api/settings`,
 * `api/login`, `api/currentuser`, `api/printerprofiles`. The plugin is a list of six route registrations
 * with short handlers, which is why it runs a little over 100 lines.
 */

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ref } from '../../server/schemas/refs.js';
import {
  OctoPrintPrinterProfiles,
  OctoPrintServer,
  OctoPrintSettings,
  OctoPrintUser,
  OctoPrintVersion,
} from '../schemas.js';
import { type OctoPrintContext, schema, targetOf as target } from './target.js';

/** The OctoPrint version slicers are told; 1.1.0 is the least PrusaSlicer accepts. */
const OCTOPRINT_SERVER = '1.10.0';

/** The user a key stands for, as OctoPrint describes one; without access control, an admin. */
function userOf(request: { actor: { name: string | null; scopes: ReadonlySet<string> } | null }) {
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
}

export const handshakeRoutes: FastifyPluginAsyncTypebox<OctoPrintContext> = async (app, context) => {
  const { machines } = context;
  const targetOf = (params: { target: string }, query: unknown) => target(machines, params, query);

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
      return userOf(request);
    },
  );
  app.get(
    '/octoprint/:target/api/currentuser',
    {
      schema: schema('octoprint_current_user', 'OctoPrint: the user the key stands for.', ref(OctoPrintUser)),
    },
    async (request) => {
      targetOf(request.params, request.query);
      return userOf(request);
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
};
