/**
 * The OctoPrint-compatible API slicers, Home Assistant and the phone apps speak, under a base URL per
 * target (base-url.ts). Handshake: `api/version`, `api/server`, `api/settings`, `api/login`,
 * `api/currentuser`, `api/printerprofiles`; status: `api/printer`, `api/job`; control: `POST api/job`,
 * `api/printer/tool`, `api/printer/bed`; upload: `api/files/local` and the `select` command; the app-keys
 * flow (`plugin/appkeys/…`); what apps read at start (`api/connection`, `api/system/commands`,
 * `api/files`); the push channel `sockjs/websocket`. Errors are OctoPrint's `{"error"}` (server/errors.ts).
 */

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { appKeyRoutes } from './routes/appkeys.js';
import { appRoutes } from './routes/apps.js';
import { fileRoutes } from './routes/files.js';
import { handshakeRoutes } from './routes/handshake.js';
import { heaterRoutes } from './routes/heaters.js';
import { printerRoutes } from './routes/printer.js';
import { sockJsRoutes } from './routes/sockjs.js';
import type { OctoPrintContext } from './routes/target.js';

export type { OctoPrintContext } from './routes/target.js';

/** The OctoPrint routes, one plugin per area (in the order the OpenAPI document lists them). */
export const octoPrintRoutes: FastifyPluginAsyncTypebox<OctoPrintContext> = async (app, context) => {
  await app.register(handshakeRoutes, context);
  await app.register(printerRoutes, context);
  await app.register(heaterRoutes, context);
  await app.register(fileRoutes, context);
  await app.register(appKeyRoutes, context);
  await app.register(appRoutes, context);
  await app.register(sockJsRoutes, context);
};
