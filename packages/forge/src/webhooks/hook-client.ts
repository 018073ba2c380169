/**
 * The HTTP client deliveries go out through (undici). Its connector resolves each host name once and
 * connects only to addresses the allow-list permits, then checks the address the socket actually
 * reached, so neither DNS rebinding nor an IP literal gets past the list. Redirects are never
 * followed (a 3xx is an answer like any other), every attempt has a deadline, and at most
 * MAX_RESPONSE_BYTES of an answer are read.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, buildConnector, request } from 'undici';
import type { HostAllowList } from './host-allow-list.js';

/** Bytes of an answer read (the rest is discarded and the connection closed). */
export const MAX_RESPONSE_BYTES = 64 * 1024;

export interface HookHttpRequest {
  url: string;
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  body?: string;
}

export interface HookHttpResult {
  /** 0 when no answer arrived. */
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Why no answer arrived (connection refused, timeout, refused by the allow-list…). */
  error: string;
  /** The target was refused by policy: retrying cannot help. */
  refused: boolean;
  durationMs: number;
}

/** Refusal by the allow-list, worded as Gitea words it (modules/hostmatcher/http.go). */
export class HostRefusedError extends Error {
  constructor(host: string, ip: string) {
    super(
      `webhook can only call allowed HTTP servers (check your webhook.ALLOWED_HOST_LIST setting), deny '${host}(${ip})'`,
    );
  }
}

export interface HookClientOptions {
  allowList: HostAllowList;
  skipTlsVerify: boolean;
  timeoutMs: number;
}

export interface HookClient {
  send(request: HookHttpRequest): Promise<HookHttpResult>;
  close(): Promise<void>;
}

/** A lookup that answers only with allowed addresses (all of them when `all` is asked). */
function allowListLookup(allowList: HostAllowList): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const allowed = addresses.filter((entry) => allowList.allows(hostname, entry.address));
      if (allowed.length === 0) {
        return callback(new HostRefusedError(hostname, addresses[0]?.address ?? ''), '', 0);
      }
      if ((options as { all?: boolean }).all) {
        return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
      }
      callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}

export function createHookClient(options: HookClientOptions): HookClient {
  const base = buildConnector({
    rejectUnauthorized: !options.skipTlsVerify,
    timeout: options.timeoutMs,
    lookup: allowListLookup(options.allowList),
  });
  // The socket's peer is checked too: an IP literal skips the lookup, and this is where the bytes go.
  const connect: buildConnector.connector = (target, callback) => {
    base(target, (error, socket) => {
      if (error || !socket) return callback(error ?? new Error('no socket'), null);
      const peer = socket.remoteAddress ?? '';
      if (!options.allowList.allows(target.hostname, peer)) {
        socket.destroy();
        return callback(new HostRefusedError(target.hostname, peer), null);
      }
      callback(null, socket);
    });
  };
  const agent = new Agent({ connect, keepAliveTimeout: 4_000, connections: 16 });

  return {
    async send(hookRequest) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      const signal = AbortSignal.timeout(options.timeoutMs);
      try {
        const response = await request(hookRequest.url, {
          dispatcher: agent,
          method: hookRequest.method,
          headers: hookRequest.headers,
          body: hookRequest.body,
          signal,
          headersTimeout: options.timeoutMs,
          bodyTimeout: options.timeoutMs,
        });
        const body = await readBounded(response.body);
        return {
          status: response.statusCode,
          headers: flattenHeaders(response.headers),
          body,
          error: '',
          refused: false,
          durationMs: elapsed(),
        };
      } catch (error) {
        const refused = findCause(error, HostRefusedError);
        const message = refused
          ? refused.message
          : signal.aborted
            ? `Delivery: timeout after ${options.timeoutMs} ms`
            : `Delivery: ${describe(error)}`;
        return {
          status: 0,
          headers: {},
          body: '',
          error: message,
          refused: !!refused,
          durationMs: elapsed(),
        };
      }
    },
    close: () => agent.close(),
  };
}

async function readBounded(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const room = MAX_RESPONSE_BYTES - size;
    chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
    size += Math.min(chunk.length, room);
    if (size >= MAX_RESPONSE_BYTES) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

function findCause<T extends Error>(error: unknown, type: new (...args: never[]) => T): T | null {
  let current: unknown = error;
  for (let depth = 0; current && depth < 5; depth += 1) {
    if (current instanceof type) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: string }).code;
  const cause = (error as { cause?: unknown }).cause;
  const inner = cause instanceof Error ? `: ${cause.message}` : '';
  return `${code ? `${code} ` : ''}${error.message}${inner}`;
}
