/**
 * The one error mapper of the HTTP API: every failure, whoever raised it (a service, a backend, Fastify,
 * the multipart parser), is rendered as the seed's `Error` body `{request_id, error_code, message}`.
 * Internal details are logged, never sent.
 */

import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { loggableUrl } from '../access/hook.js';
import { ServiceError } from '../errors.js';
import { isOctoPrintPath } from '../octoprint/base-url.js';
import type { OctoPrintErrorBody } from '../octoprint/schemas/handshake.js';
import type { ErrorBody } from './schemas/errors.js';

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
  if (reply.raw.destroyed || request.raw.socket?.destroyed) {
    // The client hung up (mid-upload, say): nothing to answer and nothing wrong with the service.
    request.log.info(
      { reqId: request.id, url: request.url, method: request.method },
      'request aborted by the client',
    );
    return reply;
  }
  if (mapped.internal !== undefined) {
    request.log.error(
      { err: mapped.internal, reqId: request.id, url: loggableUrl(request.url), method: request.method },
      'request failed',
    );
  }
  if (error instanceof MethodNotAllowed) reply.header('allow', error.allow);
  if (isOctoPrintPath(request.url)) return sendOctoPrintError(request, reply, mapped);
  const body: ErrorBody = { request_id: request.id, error_code: mapped.errorCode, message: mapped.message };
  return reply
    .code(mapped.status)
    .header('x-request-id', request.id)
    .type('application/json; charset=utf-8')
    .send(body);
}

/**
 * Under an OctoPrint base the answer is OctoPrint's own: `{"error": "…"}`, and a missing or unknown key
 * is 403, not 401 (OctoPrint answers 403 there, and Home Assistant's integration asks for a new key only
 * on 403). The request id stays in `x-request-id`.
 */
function sendOctoPrintError(request: FastifyRequest, reply: FastifyReply, mapped: MappedError): FastifyReply {
  const status = mapped.status === 401 ? 403 : mapped.status;
  if (status !== mapped.status) reply.removeHeader('www-authenticate');
  const body: OctoPrintErrorBody = { error: mapped.message };
  return reply
    .code(status)
    .header('x-request-id', request.id)
    .type('application/json; charset=utf-8')
    .send(body);
}

/**
 * Fastify's own routing errors (a URL that is not valid percent-encoding, a path segment over the router's
 * length limit), which it raises before any hook runs, in the service's error shape.
 */
export function frameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const path = request.url.length > 80 ? `${request.url.slice(0, 80)}…` : request.url;
  const rendered =
    error.code === 'FST_ERR_BAD_URL'
      ? new ServiceError(
          400,
          'BadRequest',
          `the URL ${path} is not valid: it has a malformed percent-encoding`,
        )
      : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? new ServiceError(
            414,
            'UriTooLong',
            `the URL ${path} has a path segment longer than ${MAX_PARAM_LENGTH} characters`,
          )
        : error;
  sendError(request, reply, rendered);
}

/** Longest path parameter (machine or job id) the router accepts; longer answers 414. */
export const MAX_PARAM_LENGTH = 200;

/** Node's HTTP parser errors, in words a client developer can act on. */
const PARSER_ERRORS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'the request line and headers are larger than the server accepts (16 KiB)'],
  HPE_INVALID_CONTENT_LENGTH: [400, 'the Content-Length header is not a valid length'],
  HPE_UNEXPECTED_CONTENT_LENGTH: [400, 'the request has both Content-Length and chunked Transfer-Encoding'],
  HPE_INVALID_CHUNK_SIZE: [400, 'the chunked request body is malformed (bad chunk size)'],
  HPE_INVALID_TRANSFER_ENCODING: [400, 'the Transfer-Encoding header is not valid'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'the request was not received in time'],
};

/**
 * Answers what Node's HTTP parser refuses before Fastify ever sees a request (oversized headers, a bad
 * Content-Length, broken chunked encoding) in the service's error shape, then closes the connection.
 * A connection already answering, or already gone, is simply closed.
 */
export function clientError(error: Error & { code?: string }, socket: Socket): void {
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const [status, message] = PARSER_ERRORS[error.code ?? ''] ?? [
    400,
    `the request is not valid HTTP/1.1 (${error.code ?? 'parse error'})`,
  ];
  const id = randomUUID();
  const body = JSON.stringify({
    request_id: id,
    error_code: CODE_BY_STATUS[status] ?? 'BadRequest',
    message,
  });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'content-type: application/json; charset=utf-8\r\n' +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      `x-request-id: ${id}\r\n` +
      'connection: close\r\n\r\n' +
      body,
  );
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
