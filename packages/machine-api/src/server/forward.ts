/**
 * Actions on a machine another instance of the farm drives are carried out by that instance: the request
 * is forwarded to it (its `url` in `instances`) and its answer relayed — the same status, body and the
 * headers that matter. One place for every route that acts on one machine (`machineParamOf` names them):
 * a route-level `onRequest` hook that runs after the key check, before any body is read, so the body is
 * streamed on as it arrives (bounded by the upload limit) and never held here.
 *
 * The caller's own credentials go with it (X-Api-Key, Authorization, the camera token in the query): the
 * owner authenticates the same key against the same database, so a forwarded request never has more
 * permissions than the caller. The `Origin` is not passed on: this instance applied its origin policy
 * already, and the owner would see the browser's origin as foreign to its own host.
 *
 * A forwarded request carries `X-Machine-Api-Forwarded-By`; an instance never forwards such a request
 * again (no loops, no second hop): if it does not drive the machine either (the farm moved it meanwhile),
 * it answers 503 and the client retries.
 */

import { openAsBlob } from 'node:fs';
import { Transform } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { Agent, FormData, request as send } from 'undici';
import { PayloadTooLarge, ServiceError } from '../errors.js';
import type { FarmMachines, RemoteMachine } from '../farm/farm-machines.js';
import type { Upload } from '../jobs/runner.js';
import type { MachineRegistry } from '../machines/registry.js';

/** Names the instance that forwarded a request; such a request is never forwarded again. */
export const FORWARDED_BY = 'x-machine-api-forwarded-by';

/** How long the owner may take to connect, and to answer (headers, then between body chunks). */
const CONNECT_TIMEOUT_MS = 5_000;
const ANSWER_TIMEOUT_MS = 60_000;
/** Room for the multipart framing and the `params` part around an upload of the largest allowed file. */
const MULTIPART_OVERHEAD_BYTES = 1024 * 1024;

/** Bound on an answer `call` reads whole (a machine's wire shape is a few kilobytes). */
const MAX_CALL_ANSWER_BYTES = 1024 * 1024;

/** Headers that belong to one connection, not to the request (RFC 9110 §7.6.1), and ones replaced here. */
const NOT_FORWARDED = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'host',
  'origin',
  FORWARDED_BY,
]);

/** The owner's answer headers that say something about the answer itself. */
const RELAYED = [
  'content-type',
  'content-length',
  'content-disposition',
  'cache-control',
  'etag',
  'last-modified',
  'location',
  'retry-after',
  'www-authenticate',
  'set-cookie',
  'x-request-id',
];

/** The owner of the machine is not answering (dead, or unreachable). */
export class InstanceUnavailable extends ServiceError {
  constructor(message: string) {
    super(503, 'InstanceUnavailable', message);
  }
}

/**
 * The parameter naming the machine a route acts on, or null for a route that acts on none. Every
 * `/machines/{id}/…` action and every OctoPrint route of a machine's base (`/octoprint/{id}/…`) but its
 * push channel (a WebSocket, reached on the machine's own instance). `GET /machines/{id}` is not here:
 * it is answered from the farm mirror, also when the owner is dead.
 */
export function machineParamOf(url: string): string | null {
  if (url.startsWith('/machines/:id/')) return 'id';
  if (url.startsWith('/octoprint/:target/') && !url.endsWith('/sockjs/websocket')) return 'target';
  return null;
}

export interface ForwarderOptions {
  /** This instance's name on the farm. */
  instance: string;
  machines: MachineRegistry;
  farm: FarmMachines;
  /** The upload limit: a forwarded body is cut off (413) beyond it plus the multipart framing. */
  maxUploadBytes: number;
}

/** Sends requests for other instances' machines to them and relays their answers. */
export class Forwarder {
  private readonly dispatcher = new Agent({
    connectTimeout: CONNECT_TIMEOUT_MS,
    headersTimeout: ANSWER_TIMEOUT_MS,
    bodyTimeout: ANSWER_TIMEOUT_MS,
  });

  constructor(private readonly options: ForwarderOptions) {}

  /**
   * The other instance's machine a request about `id` is for, or undefined when this instance answers it
   * (its own machine, or no machine of the farm: the route answers as for any unknown id). Throws 503
   * for a forwarded request about a machine this instance does not drive (no second hop).
   */
  remoteFor(id: string, request: FastifyRequest): RemoteMachine | undefined {
    if (this.options.machines.get(id)) return undefined;
    const remote = this.options.farm.get(id);
    if (remote && request.headers[FORWARDED_BY] !== undefined) {
      throw new InstanceUnavailable(
        `machine "${id}" is not driven by instance "${this.options.instance}" (it moved to "${remote.instance}" while the request was forwarded); retry`,
      );
    }
    return remote;
  }

  /** Sends the request, its body streamed as it arrives, to the machine's instance and relays the answer. */
  async relay(request: FastifyRequest, reply: FastifyReply, remote: RemoteMachine): Promise<void> {
    const limit = this.options.maxUploadBytes + MULTIPART_OVERHEAD_BYTES;
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > limit) throw tooLarge(this.options.maxUploadBytes);
    const hasBody =
      request.method !== 'GET' &&
      request.method !== 'HEAD' &&
      (declared > 0 || request.headers['transfer-encoding'] !== undefined);
    const bounded = hasBody ? byteLimit(limit) : undefined;
    if (bounded) request.raw.pipe(bounded);
    await this.send(request, reply, remote, request.url, this.headersOf(request), bounded ?? null, () =>
      bounded?.exceeded ? tooLarge(this.options.maxUploadBytes) : undefined,
    );
  }

  /**
   * `POST /print` for another instance's machine: its machine id is inside the multipart body, so the
   * form was received here (bounded, checked); it is sent on as a new multipart body, the file streamed
   * from disk.
   */
  async relayPrint(
    request: FastifyRequest,
    reply: FastifyReply,
    remote: RemoteMachine,
    form: { params: string; upload: Upload },
  ): Promise<void> {
    const body = new FormData();
    body.append('params', form.params);
    body.append('file', await openAsBlob(form.upload.path), form.upload.fileName);
    const headers = this.headersOf(request);
    // The new body has its own type (boundary) and length.
    delete headers['content-type'];
    delete headers['content-length'];
    await this.send(request, reply, remote, request.url, headers, body, () => undefined);
  }

  /**
   * One JSON request about a remote machine on the caller's behalf (the caller's credentials, as in
   * `relay`), for a route that acts on several machines at once; the owner's answer is read whole, up to
   * `MAX_CALL_ANSWER_BYTES`. Throws `InstanceUnavailable` when the owner is dead or does not answer.
   */
  async call(
    request: FastifyRequest,
    remote: RemoteMachine,
    path: string,
    body: unknown,
  ): Promise<{ status: number; body: unknown }> {
    if (!remote.alive) throw notAnswering(remote);
    const headers = this.headersOf(request);
    delete headers['content-length'];
    headers['content-type'] = 'application/json';
    try {
      const answer = await send(`${remote.url.replace(/\/+$/, '')}${path}`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        dispatcher: this.dispatcher,
      });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of answer.body) {
        size += (chunk as Buffer).length;
        if (size > MAX_CALL_ANSWER_BYTES) {
          answer.body.destroy();
          throw new Error(`its answer is larger than ${MAX_CALL_ANSWER_BYTES} bytes`);
        }
        chunks.push(chunk as Buffer);
      }
      const text = Buffer.concat(chunks).toString('utf8');
      return { status: answer.statusCode, body: text ? JSON.parse(text) : null };
    } catch (error) {
      throw didNotAnswer(remote, error);
    }
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }

  private headersOf(request: FastifyRequest): Record<string, string | string[]> {
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (value !== undefined && !NOT_FORWARDED.has(name)) headers[name] = value;
    }
    headers[FORWARDED_BY] = this.options.instance;
    return headers;
  }

  private async send(
    request: FastifyRequest,
    reply: FastifyReply,
    remote: RemoteMachine,
    path: string,
    headers: Record<string, string | string[]>,
    body: Transform | FormData | null,
    failure: () => Error | undefined,
  ): Promise<void> {
    if (!remote.alive) throw notAnswering(remote);
    // The client going away ends the forwarded request too (an upload, a camera stream).
    const abort = new AbortController();
    const onClose = () => {
      if (!reply.raw.writableFinished) abort.abort();
    };
    reply.raw.once('close', onClose);
    let answer: Awaited<ReturnType<typeof send>>;
    try {
      // Appended as text: the owner's URL may have a path (a `public_url` behind a reverse proxy).
      answer = await send(`${remote.url.replace(/\/+$/, '')}${path}`, {
        method: request.method as 'GET',
        headers,
        body,
        dispatcher: this.dispatcher,
        signal: abort.signal,
      });
    } catch (error) {
      reply.raw.off('close', onClose);
      throw failure() ?? didNotAnswer(remote, error);
    }
    reply.code(answer.statusCode);
    for (const name of RELAYED) {
      const value = answer.headers[name];
      if (value !== undefined) reply.header(name, value);
    }
    answer.body.once('close', () => reply.raw.off('close', onClose));
    reply.send(answer.body);
  }
}

/**
 * Adds the forwarding hook to every route `machineParamOf` names (call before the routes are registered);
 * nothing on a single instance (no forwarder).
 */
export function installForwarding(app: FastifyInstance, forwarder: Forwarder | null): void {
  if (!forwarder) return;
  app.addHook('onRoute', (route) => {
    if (route.config?.methodNotAllowed) return;
    const param = machineParamOf(route.url ?? '');
    if (!param) return;
    const hook: onRequestHookHandler = async (request, reply) => {
      const id = (request.params as Record<string, string | undefined>)[param];
      const remote = id === undefined ? undefined : forwarder.remoteFor(id, request);
      if (!remote) return;
      await forwarder.relay(request, reply, remote);
      return reply;
    };
    const existing = route.onRequest;
    // After the key check (access/hook.ts appends it in its own onRoute hook, registered before this one).
    route.onRequest = [
      ...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]),
      hook,
    ];
  });
}

function notAnswering(remote: RemoteMachine): InstanceUnavailable {
  return new InstanceUnavailable(
    `machine "${remote.id}" is driven by instance "${remote.instance}", which is not answering (no heartbeat within the timeout); retry when it is back`,
  );
}

function didNotAnswer(remote: RemoteMachine, error: unknown): InstanceUnavailable {
  return new InstanceUnavailable(
    `machine "${remote.id}" is driven by instance "${remote.instance}", which did not answer at ${remote.url}: ${(error as Error).message}`,
  );
}

function tooLarge(maxUploadBytes: number): PayloadTooLarge {
  return new PayloadTooLarge(`the request body is larger than the upload limit of ${maxUploadBytes} bytes`);
}

/** A pass-through that fails once more than `limit` bytes went through it. */
function byteLimit(limit: number): Transform & { exceeded: boolean } {
  let seen = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > limit) {
        stream.exceeded = true;
        callback(new Error(`more than ${limit} bytes`));
        return;
      }
      callback(null, chunk);
    },
  }) as Transform & { exceeded: boolean };
  stream.exceeded = false;
  return stream;
}
