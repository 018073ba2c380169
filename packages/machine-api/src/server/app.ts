/**
 * The HTTP application: Fastify with the TypeBox type provider, the shared schemas, the OpenAPI document,
 * CORS, request ids, the error mapper, 404/405 handling, request metrics, the route modules, and the
 * dashboard's static files at /ui/.
 */

import multipart from '@fastify/multipart';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, LogController } from 'fastify';
import type { Logger } from 'pino';
import { installAccess, loggableUrl } from '../access/hook.js';
import type { AccessSettings } from '../access/settings.js';
import { notifySchemas } from '../notify/schemas.js';
import { rewriteOctoPrintUrl } from '../octoprint/base-url.js';
import { octoPrintRoutes } from '../octoprint/routes.js';
import { octoPrintSchemas } from '../octoprint/schemas/index.js';
import { PushSessions } from '../octoprint/sessions.js';
import { registerDashboard } from './dashboard.js';
import {
  clientError,
  frameworkError,
  installErrorHandling,
  MAX_PARAM_LENGTH,
  methodNotAllowedRoutes,
} from './errors.js';
import { installForwarding } from './forward.js';
import { API_VERSION, registerOpenApi } from './openapi.js';
import { logClientAbort, newRequestId, serializeReply } from './reply-parts.js';
import { cameraRoutes } from './routes/cameras.js';
import { eventRoutes } from './routes/events.js';
import { fileRoutes } from './routes/files.js';
import { jobRoutes } from './routes/jobs.js';
import { keyRoutes } from './routes/keys.js';
import { machineRoutes } from './routes/machines.js';
import { metaRoutes } from './routes/meta.js';
import { notificationRoutes } from './routes/notifications.js';
import { printRoutes } from './routes/print.js';
import { queueRoutes } from './routes/queue.js';
import { spoolRoutes } from './routes/spools.js';
import { statsRoutes } from './routes/stats.js';
import { temperatureRoutes } from './routes/temperature.js';
import { sharedSchemas } from './schemas/index.js';
import { keySchemas } from './schemas/keys.js';
import type { ServerContext, TypedApp } from './types.js';

export interface AppOptions extends ServerContext {
  logger: Logger;
  access: AccessSettings;
}

/**
 * Builds the HTTP application; the caller decides where it listens.
 *
 * Long by design: plugins, hooks and route groups in the order a request meets them.
 */
export async function buildApp(options: AppOptions): Promise<TypedApp> {
  const { logger, access: _access, ...context } = options;
  const debug = logger.isLevelEnabled('debug');
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // Per-request log lines cost throughput: requests are logged at debug level in onResponse below, and
    // the per-request child logger (with its redaction pass) is only made when debug logging is on;
    // otherwise errors carry the request id themselves (see errors.ts).
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: (parent, bindings, childOptions) =>
      debug ? parent.child(bindings, childOptions) : parent,
    genReqId: newRequestId,
    // Slicers append `api/…` to an OctoPrint base URL as text, into its query when it has one.
    rewriteUrl: (request) => rewriteOctoPrintUrl(request.url ?? '/'),
    requestIdHeader: false,
    // OpenAPI's numeric formats are documentation; the JSON types and minimums carry the checks.
    ajv: { customOptions: { formats: { uint: true, double: true, binary: true } } },
    // Every error the service sends has its shape, also those raised before routing or by Node's parser.
    frameworkErrors: frameworkError,
    clientErrorHandler: clientError,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
  }).withTypeProvider<TypeBoxTypeProvider>();
  // Plain JSON.stringify serialises (reply-parts.ts). As the reply serializer it is also used without
  // looking up a per-route, per-status serializer for every answer (the compiler below only keeps
  // Fastify from compiling fast-json-stringify ones at start-up).
  app.setSerializerCompiler(() => serializeReply);
  app.setReplySerializer(serializeReply);

  // Callback-style hooks: no promise per request on the hot path.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  // A client hanging up is ordinary: logged at info, never as a failure of the service.
  app.addHook('onRequestAbort', (request, done) => {
    logClientAbort(request.log, request.id, request.url, request.method);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    context.metrics.observeRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    if (debug) {
      request.log.debug(
        {
          method: request.method,
          url: loggableUrl(request.url),
          status: reply.statusCode,
          ms: reply.elapsedTime,
        },
        'request',
      );
    }
    done();
  });

  // CORS and the key/scope/origin checks, before any route and before any body is read.
  await installAccess(app, {
    settings: options.access,
    keys: context.keys,
    cameraTokens: context.cameraTokens,
  });
  // Actions on a machine of another instance go to that instance, after the key check (forward.ts).
  installForwarding(app, context.forwarder);
  // Multipart bodies are parsed only by the upload routes (see below). Elsewhere such a body is accepted
  // unread, as @fastify/multipart's parser would, so those routes answer as before (their own validation).
  app.addContentTypeParser('multipart/form-data', (_request, _payload, done) => done(null));
  for (const schema of [...sharedSchemas, ...keySchemas, ...notifySchemas, ...octoPrintSchemas])
    app.addSchema(schema);
  await registerOpenApi(app, options.access);
  installErrorHandling(app);
  const notAllowed = methodNotAllowedRoutes(app);

  await app.register(metaRoutes, { context });
  await app.register(machineRoutes, { context });
  await app.register(temperatureRoutes, { context });
  await app.register(spoolRoutes, { context });
  await app.register(jobRoutes, { context });
  await app.register(statsRoutes, { context });
  await app.register(cameraRoutes, { context });
  await registerDashboard(app);
  await app.register(keyRoutes, { context });
  await app.register(notificationRoutes, { context });
  await app.register(fileRoutes, { context });
  // The routes that take uploads, in a context of their own: @fastify/multipart adds an async onRequest
  // and an async onResponse hook (temp-file cleanup) to every route of the context it is registered in,
  // which cost every other request (`GET /ping`, `GET /machines`) two promises and a listener.
  // Limits are given per request by the routes; parts are streamed, never buffered whole.
  await app.register(async (uploads: TypedApp) => {
    uploads.removeContentTypeParser('multipart/form-data');
    await uploads.register(multipart);
    await uploads.register(printRoutes, { context });
    await uploads.register(queueRoutes, { context });
    await uploads.register(octoPrintRoutes, {
      machines: context.machines,
      appKeys: context.appKeys,
      hasCamera: (machineId) => context.cameras.status(machineId) !== null,
      cameraTokens: context.cameraTokens,
      installSecret: context.installSecret,
      temperatures: context.temperatures,
      sessions: new PushSessions(context.keys),
      currentJob: async (machineId) => {
        const current = context.jobs.currentJob(machineId);
        return current ? context.jobs.get(current.id).catch(() => null) : null;
      },
      statusTimeoutMs: context.statusTimeoutMs,
      files: context.files,
      submit: context.submit,
      uploadDir: context.jobs.uploadDir,
      maxUploadBytes: context.maxUploadBytes,
      version: API_VERSION,
    });
  });
  await app.register(eventRoutes, { context });

  notAllowed.register();
  return app;
}
