/**
 * A real webhook receiver for tests: an HTTP server on 127.0.0.1 that verifies X-Gitea-Signature and
 * X-Hub-Signature-256 as Gitea's documentation tells receivers to (HMAC-SHA256 of the JSON payload with
 * the shared secret, compared in constant time), records what arrived, and can be told to fail.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedHook {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The JSON payload (from the body, or from `payload=` of a form body). */
  payload: unknown;
  /** Both signature headers matched the secret. */
  signatureValid: boolean;
}

export interface HookReceiver {
  url: string;
  port: number;
  received: ReceivedHook[];
  /** Status to answer with (200 by default). */
  status: number;
  /** Waits until `predicate` holds over what arrived (polling, bounded). */
  waitFor(predicate: (received: ReceivedHook[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

function sameHex(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Gitea's documented verification: HMAC-SHA256 over the JSON payload, hex. */
export function verifySignatures(headers: IncomingHttpHeaders, json: string, secret: string): boolean {
  const expected = createHmac('sha256', secret).update(json).digest('hex');
  return (
    sameHex(String(headers['x-gitea-signature'] ?? ''), expected) &&
    sameHex(String(headers['x-hub-signature-256'] ?? ''), `sha256=${expected}`)
  );
}

export async function startHookReceiver(secret = '', port = 0): Promise<HookReceiver> {
  const received: ReceivedHook[] = [];
  const receiver = { status: 200 } as HookReceiver;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const isForm = String(request.headers['content-type']).startsWith('application/x-www-form-urlencoded');
      const json = isForm ? (new URLSearchParams(body).get('payload') ?? '') : body;
      let payload: unknown = null;
      try {
        payload = JSON.parse(json);
      } catch {
        payload = null;
      }
      received.push({
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body,
        payload,
        signatureValid: verifySignatures(request.headers, json, secret),
      });
      response.writeHead(receiver.status, { 'content-type': 'text/plain' });
      response.end(`received ${received.length}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const actualPort = (server.address() as AddressInfo).port;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${actualPort}/hook`,
    port: actualPort,
    received,
    async waitFor(predicate: (r: ReceivedHook[]) => boolean, timeoutMs = 20_000) {
      const started = Date.now();
      while (!predicate(received)) {
        if (Date.now() - started > timeoutMs) {
          throw new Error(`timed out waiting for deliveries; received ${received.length}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
