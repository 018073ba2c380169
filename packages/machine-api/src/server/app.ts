/**
 * The HTTP application: Fastify with the TypeBox type provider, the shared schemas, the OpenAPI document,
 * CORS, request ids, the error mapper, 404/405 handling, request metrics, and the route modules.
 */

import { randomUUID } from 'node:crypto';
import cors from '@fastify/cors';
import multipart from '@fastify/multipart';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, LogController } from 'fastify';
import type { Logger } from 'pino';
import { installErrorHandling, methodNotAllowedRoutes } from './errors.js';
import { registerOpenApi } from './openapi.js';
import { jobRoutes } from './routes/jobs.js';
import { machineRoutes } from './routes/machines.js';
import { metaRoutes } from './routes/meta.js';
import { printRoutes } from './routes/print.js';
import { sharedSchemas } from './schemas.js';
import type { ServerContext, TypedApp } from './types.js';

export interface AppOptions extends ServerContext {
  logger: Logger;
}

/** Builds the HTTP application; the caller decides where it listens. */
export async function buildApp(options: AppOptions): Promise<TypedApp> {
  const { logger, ...context } = options;
  const debug = logger.isLevelEnabled('debug');
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // Per-request log lines cost throughput: requests are logged at debug level in onResponse below, and
    // the per-request child logger (with its redaction pass) is only made when debug logging is on;
    // otherwise errors carry the request id themselves (see errors.ts).
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: (parent, bindings, childOptions) =>
      debug ? parent.child(bindings, childOptions) : parent,
    // Like the anchor: a fresh UUID per request; a client-supplied x-request-id is not trusted.
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    // OpenAPI's numeric formats are documentation; the JSON types and minimums carry the checks.
    ajv: { customOptions: { formats: { uint: true, double: true, binary: true } } },
  }).withTypeProvider<TypeBoxTypeProvider>();
  // Handlers build exact wire shapes from typed values; the schemas' OpenAPI 3.0 `nullable` is beyond
  // fast-json-stringify, so plain JSON.stringify serialises.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));

  // Callback-style hooks: no promise per request on the hot path.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    context.metrics.observeRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    if (debug) {
      request.log.debug(
        { method: request.method, url: request.url, status: reply.statusCode, ms: reply.elapsedTime },
        'request',
      );
    }
    done();
  });

  await app.register(cors, {
    origin: '*',
    methods: ['GET', 'HEAD', 'POST'],
    exposedHeaders: ['x-request-id'],
    maxAge: 600,
    // Any OPTIONS request is answered as a preflight, so it never falls into the 405 routes.
    strictPreflight: false,
    hideOptionsRoute: true,
  });
  // Limits are given per request by the print route; parts are streamed, never buffered whole.
  await app.register(multipart);
  for (const schema of sharedSchemas) app.addSchema(schema);
  await registerOpenApi(app);
  installErrorHandling(app);
  const notAllowed = methodNotAllowedRoutes(app);

  metaRoutes(app, context);
  machineRoutes(app, context);
  printRoutes(app, context);
  jobRoutes(app, context);

  notAllowed.register();
  return app;
}
