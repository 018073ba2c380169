/**
 * The one error mapper of the HTTP API: every failure, whoever raised it (a service, a backend, Fastify,
 * the multipart parser), is rendered as the seed's `Error` body `{request_id, error_code, message}`.
 * Internal details are logged, never sent.
 */

import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../errors.js';
import { MachineError } from '../machines/machine.js';
import type { ErrorBody } from './schemas.js';

/** The path exists but not with this method; `allow` lists the methods it has. */
export class MethodNotAllowed extends ServiceError {
  constructor(
    method: string,
    path: string,
    readonly allow: string,
  ) {
    super(405, 'MethodNotAllowed', `${method} is not allowed on ${path}; allowed: ${allow}`);
  }
}

const MACHINE_ERROR_STATUS: Record<MachineError['code'], number> = {
  MachineBusy: 409,
  MachineRejected: 409,
  MachineOffline: 503,
  NotSupported: 501,
};

/** Error codes for Fastify's own 4xx errors, by status. */
const CODE_BY_STATUS: Record<number, string> = {
  400: 'BadRequest',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  408: 'RequestTimeout',
  411: 'LengthRequired',
  413: 'PayloadTooLarge',
  414: 'UriTooLong',
  415: 'UnsupportedMediaType',
  431: 'RequestHeaderFieldsTooLarge',
};

interface MappedError {
  status: number;
  errorCode: string;
  message: string;
  /** Only for server faults: what is logged instead of being sent. */
  internal?: unknown;
}

/** Maps anything thrown while handling a request to a status, an error code and a safe message. */
export function mapError(error: unknown): MappedError {
  if (error instanceof ServiceError) {
    return { status: error.statusCode, errorCode: error.errorCode, message: error.message };
  }
  if (error instanceof MachineError) {
    return { status: MACHINE_ERROR_STATUS[error.code], errorCode: error.code, message: error.message };
  }
  const fastifyError = error as Partial<FastifyError> | null;
  if (fastifyError?.validation) {
    return { status: 400, errorCode: 'BadRequest', message: fastifyError.message ?? 'invalid request' };
  }
  const status = fastifyError?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return {
      status,
      errorCode: CODE_BY_STATUS[status] ?? 'BadRequest',
      message: fastifyError?.message ?? 'bad request',
    };
  }
  return { status: 500, errorCode: 'Internal', message: 'Internal Server Error', internal: error };
}

function sendError(request: FastifyRequest, reply: FastifyReply, error: unknown): FastifyReply {
  const mapped = mapError(error);
  if (mapped.internal !== undefined) {
    request.log.error(
      { err: mapped.internal, reqId: request.id, url: request.url, method: request.method },
      'request failed',
    );
  }
  if (error instanceof MethodNotAllowed) reply.header('allow', error.allow);
  const body: ErrorBody = { request_id: request.id, error_code: mapped.errorCode, message: mapped.message };
  return reply.code(mapped.status).type('application/json; charset=utf-8').send(body);
}

/**
 * Installs the error mapper and the not-found handler, and records the methods of every route so that
 * `methodNotAllowedRoutes` can answer 405 with `Allow` for the others.
 */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => sendError(request, reply, error));
  app.setNotFoundHandler((request, reply) =>
    sendError(
      request,
      reply,
      new ServiceError(404, 'NotFound', `no route for ${request.method} ${request.url}`),
    ),
  );
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * Tracks the methods each path is registered with; `register()` then adds, for each path, the missing
 * methods as routes answering 405 with `Allow`. OPTIONS stays with the CORS preflight handler.
 */
export function methodNotAllowedRoutes(app: FastifyInstance) {
  const methodsByPath = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    if (route.url === '*' || route.config?.methodNotAllowed) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const known = methodsByPath.get(route.url) ?? new Set<string>();
    for (const method of methods) known.add(method);
    methodsByPath.set(route.url, known);
  });
  return {
    register(): void {
      for (const [path, known] of methodsByPath) {
        const allow = METHODS.filter((m) => known.has(m)).join(', ');
        const missing = METHODS.filter((m) => !known.has(m));
        app.route({
          method: missing,
          url: path,
          config: { methodNotAllowed: true },
          schema: { hide: true },
          handler: async (request) => {
            throw new MethodNotAllowed(request.method, request.url.split('?')[0] ?? path, allow);
          },
        });
      }
    },
  };
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Marks the generated 405 routes so they are not tracked as real routes. */
    methodNotAllowed?: boolean;
  }
}
