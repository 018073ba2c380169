/**
 * `GET /ping` and `HEAD /ping` answered in the HTTP server's request listener, before Fastify. Load
 * balancers and monitors call it many times a second, and Fastify's routing, Request/Reply objects, hooks
 * and after-response listeners cost about a third of the CPU such an answer takes (profile and A/B in
 * bench/results/m-ping-2026-11-24c.md and -24d.md).
 *
 * The answer must be the one Fastify would give, byte for byte but for `x-request-id` and `Date`, so it is
 * given only when nothing the hooks do depends on the request: the exact URL `/ping`, no `Origin` header
 * (the CORS answer then depends only on the start-up policy), the route's access rule open, debug logging
 * off (the access log line is the onResponse hook's), and the application not closing (Fastify then
 * answers 503 with `Connection: close`). Everything else goes to Fastify, whose handler is the listener's
 * fallback. Headers come from the same functions as the hooks', the body from the route's own value and
 * serializer, and the answer is counted in the request metrics as the onResponse hook counts it.
 */

import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerOptions,
  type ServerResponse,
} from 'node:http';
import type { FastifyBaseLogger, FastifyServerFactory } from 'fastify';
import { corsHeaders } from '../access/hook.js';
import { changesState, classifyOrigin, corsOrigin, type OriginPolicy } from '../access/origins.js';
import type { ServiceMetrics } from '../metrics.js';
import { logClientAbort, newRequestId } from './reply-parts.js';

/** What Fastify's reply sets for a serialized value. */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
const ROUTE = '/ping';

/** The options Fastify hands its `serverFactory`, its defaults applied (fastify.js). */
interface ResolvedOptions {
  http?: ServerOptions;
  keepAliveTimeout: number;
  requestTimeout: number;
  connectionTimeout: number;
  maxRequestsPerSocket: number;
}

export interface PingAnswer {
  /** The route's body, serialized by the reply serializer. */
  body: string;
  /** The read policy the access hook applies. */
  origins: OriginPolicy;
}

export class PingFastPath {
  /** Response head with the request id left blank (index 1), or null while Fastify answers everything. */
  private head: string[] | null = null;
  private body = '';

  constructor(
    private readonly metrics: ServiceMetrics,
    private readonly log: FastifyBaseLogger,
  ) {}

  /**
   * Fastify's `serverFactory`. Fastify sets the timeouts only on servers it creates itself (its
   * lib/server.js); they are set here the same way, from the options it resolved, or every answer's
   * `Keep-Alive` would change.
   */
  readonly serverFactory: FastifyServerFactory = (fastify, resolved) => {
    const options = resolved as unknown as ResolvedOptions;
    const server: Server = createServer(options.http ?? {}, (request, response) => {
      if (this.head !== null && request.url === ROUTE && request.headers.origin === undefined) {
        const method = request.method;
        if (method === 'GET' || method === 'HEAD') {
          this.answer(request, response, method, this.head);
          return;
        }
      }
      fastify(request, response);
    });
    server.keepAliveTimeout = options.keepAliveTimeout;
    server.requestTimeout = options.requestTimeout;
    server.setTimeout(options.connectionTimeout);
    if (options.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
    return server;
  };

  /** Starts answering; call once every route and hook is in place. */
  enable(answer: PingAnswer): void {
    // A request without Origin: the CORS headers the access hook sets for it, in its order.
    const kind = classifyOrigin(undefined, undefined, answer.origins);
    const allowed = corsOrigin(kind, undefined, changesState('GET'), answer.origins);
    // The order Fastify sends them in: the request id hook's, the access hook's, then the reply's own.
    this.head = [
      'x-request-id',
      '',
      ...corsHeaders(allowed).flat(),
      'content-type',
      JSON_CONTENT_TYPE,
      'content-length',
      String(Buffer.byteLength(answer.body)),
    ];
    this.body = answer.body;
  }

  /** From now on Fastify answers everything (called once `close()` has begun). */
  disable(): void {
    this.head = null;
  }

  private answer(request: IncomingMessage, response: ServerResponse, method: string, template: string[]) {
    const began = performance.now();
    const head = template.slice();
    const id = newRequestId();
    head[1] = id;
    response.writeHead(200, head);
    // HEAD: the same head, no body (Node writes none for HEAD), as Fastify's HEAD route sends.
    response.end(method === 'HEAD' ? undefined : this.body);
    this.metrics.observeRequest(method, ROUTE, 200, (performance.now() - began) / 1000);
    // Fastify's onRequestAbort hook logs a client that hangs up before the answer is out. When the answer
    // was written whole just now, nothing can abort it; otherwise (queued behind a pipelined answer, or a
    // full socket buffer) watch for that as Fastify does.
    const socket = response.socket;
    if (socket === null || socket.writableLength > 0) {
      request.once('close', () => {
        if (request.aborted) logClientAbort(this.log, id, ROUTE, method);
      });
    }
  }
}
