/**
 * The OctoPrint-compatible subset slicers speak, under a base URL per target (base-url.ts). Handshake:
 * `api/version`, `api/server`, `api/settings`, `api/login`, `api/currentuser`, `api/printerprofiles`;
 * status polled by Cura: `api/printer`, `api/job`; upload: `api/files/local` (`print=true` prints or
 * queues, otherwise the file is stored), and the `select` command Cura sends after an upload.
 */

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { appKeyRoutes } from './routes/appkeys.js';
import { fileRoutes } from './routes/files.js';
import { handshakeRoutes } from './routes/handshake.js';
import { printerRoutes } from './routes/printer.js';
import type { OctoPrintContext } from './routes/target.js';

export type { OctoPrintContext } from './routes/target.js';

/** The OctoPrint routes, one plugin per area (in the order the OpenAPI document lists them). */
export const octoPrintRoutes: FastifyPluginAsyncTypebox<OctoPrintContext> = async (app, context) => {
  await app.register(handshakeRoutes, context);
  await app.register(printerRoutes, context);
  await app.register(fileRoutes, context);
  await app.register(appKeyRoutes, context);
};
