/**
 * Replay of kept answers in front of Fastify. When a kept answer (api/kept-answers.ts) goes out, the
 * response as sent (status 200, its header lines, its body) is also kept under the exact URL, Host and a
 * hash of the exact Authorization value, tagged with the read cache's epoch (services/read-cache.ts).
 * The next request with that URL, Host and Authorization is answered from it in the node:http listener,
 * without Fastify's routing, hooks, authentication and Request/Reply objects, but only when it provably
 * gets the same answer from the Fastify path:
 * - GET over HTTP/1.1, and every request header is one of ALLOWED_HEADERS (none of which any route
 *   reads to build these answers), Host and Authorization at most once. Anything else (Sudo, Cookie,
 *   Signature, If-None-Match, a body, …) goes to Fastify, as does any query token or sudo (never kept);
 * - no Authorization, or a personal access token (`token <40 hex>` / `Bearer <40 hex>`): its check reads
 *   only the database, except the once-a-minute touch of its `updated_unix`, which is a write; the
 *   replay is only valid before that touch is due. OAuth2 tokens (JWTs, with a clock expiry), Basic and
 *   signatures are never kept for replay;
 * - the database stamp read now is the epoch's the answer was built and authenticated under, so no row
 *   it depends on (token, user, repository, scope) changed. SQLite reads it synchronously (outside a
 *   transaction; inside one the request goes to Fastify). PostgreSQL reads it with one round trip
 *   (`pg_current_snapshot()`, as the read cache does) only when an answer is kept for the key; the
 *   request waits for it untouched: node:http needs nothing attached in the listener itself, and the
 *   request's stream stays paused (replayed requests have no body) until Fastify gets it, if it does;
 * - the server is not closing (Fastify then answers 503), checked again after the round trip, and debug
 *   logging is off (its access line is an onResponse hook): buildApp installs the replay only then.
 * Headers node:http writes per response (Date, Connection, Keep-Alive) are not kept: node writes them
 * for the replayed answer by the same rules, on the same server settings Fastify would have set.
 */
import { hash } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest, FastifyServerFactory } from 'fastify';
import type { ServiceContext } from '../services/context.js';
import { type ReplayAnswer, replayLookup } from '../services/read-cache.js';
import { TOKEN_TOUCH_SECONDS } from '../services/tokens.js';

/** Request headers a replayed request may carry: none changes a kept answer. */
const ALLOWED_HEADERS = new Set([
  'host',
  'user-agent',
  'accept',
  'accept-encoding',
  'connection',
  'authorization',
]);
/** A personal access token in the Authorization header (services/tokens.ts TOKEN_SHAPE). */
const TOKEN_HEADER = /^(?:token|bearer) [0-9a-f]{40}$/i;
/** Written by node:http on every response by its own rules; never kept. */
const PER_RESPONSE_HEADERS = new Set(['date', 'connection', 'keep-alive']);

/** The replay key of a request handed to Fastify, when it could be replayed (set by the listener). */
const REPLAY_KEY = Symbol('forge.replayKey');
type KeyedMessage = IncomingMessage & { [REPLAY_KEY]?: string };

/** The replay key of a request, or null when it may not be replayed whatever is kept. */
function replayKey(req: IncomingMessage): string | null {
  if (req.method !== 'GET' || req.httpVersion !== '1.1') return null;
  const raw = req.rawHeaders;
  let host: string | undefined;
  let authorization: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (!ALLOWED_HEADERS.has(name)) return null;
    if (name === 'host') {
      if (host !== undefined) return null;
      host = raw[i + 1]!;
    } else if (name === 'authorization') {
      if (authorization !== undefined) return null;
      authorization = raw[i + 1]!;
    }
  }
  if (host === undefined) return null;
  if (authorization === undefined) return `${req.url}\n${host}\n`;
  if (!TOKEN_HEADER.test(authorization)) return null;
  // The credential itself is never kept: only its hash is part of the key.
  return `${req.url}\n${host}\n${hash('sha256', authorization, 'base64')}`;
}

/** The replay layer's state: closing (every request then goes to Fastify, 503) and a count for tests. */
export interface ReplayState {
  closing: boolean;
  /** Answers replayed so far (tests check their requests took the path they test). */
  replayed: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    replay: ReplayState;
  }
}

/**
 * Fastify's serverFactory: a node:http server that answers replayable requests from kept answers and
 * hands every other request to Fastify. Sets what Fastify sets on the servers it creates itself
 * (fastify/lib/server.js), so answers on either path carry the same Keep-Alive and timeouts.
 */
export function replayServerFactory(ctx: ServiceContext, state: ReplayState): FastifyServerFactory {
  return (handler, rawOptions) => {
    // The options Fastify passes on after applying its defaults (keepAliveTimeout 72 s, …).
    const options = rawOptions as {
      http?: http.ServerOptions;
      keepAliveTimeout: number;
      requestTimeout: number;
      connectionTimeout: number;
      maxRequestsPerSocket: number;
    };
    const lookup = replayLookup(ctx);
    /** Answers from `kept` if it may still be sent (not closing, token touch not due); else false. */
    const replayed = (kept: ReplayAnswer | undefined, res: ServerResponse): boolean => {
      if (!kept || state.closing || Date.now() / 1000 >= kept.validBeforeUnix) return false;
      state.replayed += 1;
      res.writeHead(200, kept.headers);
      res.end(kept.body);
      return true;
    };
    const server = http.createServer(options.http ?? {}, (req: KeyedMessage, res: ServerResponse) => {
      if (lookup && !state.closing) {
        const key = replayKey(req);
        if (key !== null) {
          const kept = lookup(key);
          if (kept instanceof Promise) {
            // PostgreSQL, an answer kept for the key: replayed once the stamp is read, or handed to
            // Fastify then (also when the stamp cannot be read: Fastify answers that as it would).
            const toFastify = () => {
              req[REPLAY_KEY] = key;
              handler(req, res);
            };
            kept.then((answer) => {
              if (!replayed(answer, res)) toFastify();
            }, toFastify);
            return;
          }
          if (replayed(kept, res)) return;
          req[REPLAY_KEY] = key;
        }
      }
      handler(req, res);
    });
    server.keepAliveTimeout = options.keepAliveTimeout;
    server.requestTimeout = options.requestTimeout;
    server.setTimeout(options.connectionTimeout);
    if (options.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
    return server;
  };
}

/** The header lines of a sent head (`HTTP/1.1 200 OK\r\nName: value\r\n…`) but the per-response ones. */
function keptHeaderLines(head: string, bodyLength: number): string[] | null {
  const lines = head.split('\r\n');
  if (lines[0] !== 'HTTP/1.1 200 OK') return null;
  const headers: string[] = [];
  let length: string | undefined;
  for (const line of lines.slice(1)) {
    if (line === '') continue;
    const colon = line.indexOf(': ');
    if (colon <= 0) return null;
    const name = line.slice(0, colon);
    const lower = name.toLowerCase();
    if (PER_RESPONSE_HEADERS.has(lower)) continue;
    if (lower === 'transfer-encoding') return null;
    if (lower === 'content-length') length = line.slice(colon + 2);
    headers.push(name, line.slice(colon + 2));
  }
  return length === String(bodyLength) ? headers : null;
}

/**
 * Called where a kept answer is built (kept-answers.ts onSend): once the response has gone out, keeps it
 * for replay if the request could be replayed (the listener set its key) and its credential may be.
 */
export function keepForReplay(
  request: FastifyRequest,
  reply: FastifyReply,
  body: Buffer,
  keep: (key: string, answer: ReplayAnswer) => void,
): void {
  const key = (request.raw as KeyedMessage)[REPLAY_KEY];
  if (key === undefined) return;
  const auth = request.auth;
  let validBeforeUnix: number;
  if (auth.method === 'anonymous' && request.headers.authorization === undefined) {
    validBeforeUnix = Number.POSITIVE_INFINITY;
  } else if (auth.method === 'token' && auth.tokenUpdatedUnix !== undefined) {
    validBeforeUnix = auth.tokenUpdatedUnix + TOKEN_TOUCH_SECONDS;
  } else {
    return;
  }
  const res = reply.raw as ServerResponse & { _header?: unknown };
  res.once('finish', () => {
    if (res.statusCode !== 200 || typeof res._header !== 'string') return;
    const headers = keptHeaderLines(res._header, body.length);
    if (headers) keep(key, { headers, body, validBeforeUnix });
  });
}
