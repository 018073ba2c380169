/** Pieces of every answer: the request id, the reply serializer and the client-abort log line (app.ts). */

import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';

/** Like the anchor: a fresh UUID per request; a client-supplied x-request-id is not trusted. */
export function newRequestId(): string {
  return randomUUID();
}

/**
 * The reply serializer. Handlers build exact wire shapes from typed values; the schemas' OpenAPI 3.0
 * `nullable` is beyond fast-json-stringify, so plain JSON.stringify serialises.
 */
export function serializeReply(payload: unknown): string {
  return JSON.stringify(payload);
}

/** A client hanging up is ordinary: logged at info, never as a failure of the service. */
export function logClientAbort(log: FastifyBaseLogger, reqId: string, url: string, method: string): void {
  log.info({ reqId, url, method }, 'request aborted by the client');
}
