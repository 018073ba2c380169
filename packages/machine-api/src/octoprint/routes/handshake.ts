/**
 * The OctoPrint handshake slicers run before an upload: `api/version`, `api/server`, `api/settings`,
 * `api/login`, `api/currentuser`, `api/printerprofiles`. The plugin is a list of six route registrations
 * with short handlers, which is why it runs a little over 100 lines.
 */

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Actor, ANONYMOUS, allows } from '../../access/scopes.js';
import { ref } from '../../server/schemas/refs.js';
import { basePath, upnpUuid } from '../base-url.js';
import { OctoPrintServer, OctoPrintSettings, OctoPrintUser, OctoPrintVersion } from '../schemas/handshake.js';
import { OctoPrintPrinterProfiles } from '../schemas/printer.js';
import { ANONYMOUS_USER } from '../sessions.js';
import { type OctoPrintContext, schema, targetOf as target } from './target.js';

/** The OctoPrint version slicers are told; 1.1.0 is the least PrusaSlicer accepts. */
const OCTOPRINT_SERVER = '1.10.0';

function allowsRead(actor: Actor | null): boolean {
  return actor === null || allows(actor, 'read');
}

/**
 * OctoPrint's `webcam` block. The URLs are absolute: Home Assistant (pyoctoprintapi) resolves a relative
 * one against its base, other apps against the host's root, and only an absolute URL means the same to
 * both. Home Assistant takes the still image from the stream URL with `action=snapshot` in its query,
 * which this URL answers too.
 */
function webcamSettings(url: string | null) {
  return {
    webcamEnabled: url !== null,
    timelapseEnabled: false,
    streamUrl: url === null ? '' : `${url}&action=stream`,
    snapshotUrl: url === null ? '' : `${url}&action=snapshot`,
    streamRatio: '16:9',
    streamTimeout: 5,
    snapshotTimeout: 5,
    snapshotSslValidation: true,
    flipH: false,
    flipV: false,
    rotate90: false,
    bitrate: '',
    cacheBuster: false,
  };
}

/** The discovery plugin's settings: `upnpUuid` is the device id Home Assistant keys the printer on. */
function discoverySettings(upnpUuid: string) {
  return { upnpUuid, publicHost: null, publicPort: null, httpUsername: null, httpPassword: null };
}

/** The user a key stands for, as OctoPrint describes one; without access control, an admin. */
function userOf(request: { actor: { name: string | null; scopes: ReadonlySet<string> } | null }) {
  const actor = request.actor;
  const admin = actor ? actor.scopes.has('admin') : true;
  return {
    name: actor?.name ?? ANONYMOUS_USER,
    active: true,
    admin,
    user: true,
    groups: admin ? ['admins', 'users'] : ['users'],
    permissions: [...(actor?.scopes ?? [])],
  };
}

/**
 * The OctoPrint routes slicers call to find and check the printer (`api/version`, `api/settings`, …).
 *
 * Long by design: one registration per route of the area, each a schema and a short handler that calls a service.
 */
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
      const target = targetOf(request.params, request.query);
      const machineId = target.kind === 'machine' ? target.machineId : 'queue';
      const base = `${request.protocol}://${request.headers.host ?? 'localhost'}${basePath(target)}`;
      // The camera URLs carry the camera token, so only a key that may see the camera is told them.
      const camera =
        target.kind === 'machine' && context.hasCamera(machineId) && allowsRead(request.actor)
          ? await context.cameraTokens.tokenFor(machineId)
          : null;
      return {
        api: { allowCrossOrigin: false },
        feature: { sdSupport: false },
        webcam: webcamSettings(camera === null ? null : `${base}webcam/?token=${camera}`),
        plugins: { discovery: discoverySettings(upnpUuid(context.installSecret, machineId)) },
      };
    },
  );

  app.post(
    '/octoprint/:target/api/login',
    {
      schema: schema(
        'octoprint_login',
        "OctoPrint: passive login; answers the key's name and a session for the push channel.",
        ref(OctoPrintUser),
      ),
    },
    async (request) => {
      targetOf(request.params, request.query);
      // A passive login (the apps' only kind) gives the session their push channel authenticates with.
      return { ...userOf(request), session: context.sessions.open(request.actor ?? ANONYMOUS) };
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
