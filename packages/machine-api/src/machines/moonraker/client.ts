/**
 * Moonraker's HTTP API (Arksine/moonraker, docs/external_api): every call has a deadline, sends the
 * optional API key as `X-Api-Key`, checks the HTTP status and unwraps the `{"result": …}` envelope.
 * A non-2xx answer becomes a `MoonrakerRequestError` carrying Moonraker's own `error.message`; a
 * Moonraker that cannot be reached or does not answer in time becomes a `MoonrakerUnreachable`.
 */

import { createHash } from 'node:crypto';
import { createReadStream, openAsBlob } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { Agent, FormData, Response } from 'undici';
import { LazyModule } from '../../lazy-module.js';

/** The HTTP client library, loaded with the first request to a Moonraker (not at start-up). */
const undici = new LazyModule(() => import('undici'));

/** The printer objects this backend reads: job state, file progress, heaters and Klippy's own state. */
export const STATUS_OBJECTS = {
  webhooks: null,
  print_stats: null,
  virtual_sdcard: null,
  extruder: ['temperature', 'target'],
  heater_bed: ['temperature', 'target'],
} as const;

/** `GET /server/info` (the fields this backend uses; Moonraker sends more). */
export interface ServerInfo {
  klippy_connected: boolean;
  klippy_state: string;
  moonraker_version?: string;
  api_version_string?: string;
}

/** `GET /printer/info`, answered by Klippy through Moonraker. */
export interface PrinterInfo {
  state: string;
  state_message: string;
  hostname?: string;
  software_version?: string;
  cpu_info?: string;
}

/** `result.status` of an object query or subscription: printer object name → its fields. */
export type ObjectStatus = Record<string, Record<string, unknown>>;

export interface UploadedItem {
  path: string;
  root: string;
}

/** Moonraker answered, with an error status. `message` is Moonraker's (or Klipper's) own text. */
export class MoonrakerRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'MoonrakerRequestError';
  }
}

/** Moonraker did not answer: connection refused or reset, DNS failure, or no answer before the deadline. */
export class MoonrakerUnreachable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MoonrakerUnreachable';
  }
}

export interface MoonrakerClientOptions {
  /** Base URL without trailing slash, e.g. `http://192.168.1.102:7125`. */
  endpoint: string;
  apiKey?: string;
  /** Deadline of every request except the upload body itself. */
  timeoutMs: number;
}

export class MoonrakerClient {
  readonly endpoint: string;
  /** Made with the first request (see `pool`). */
  private agent: Agent | null = null;
  private closed = false;

  constructor(private readonly options: MoonrakerClientOptions) {
    this.endpoint = options.endpoint.replace(/\/+$/, '');
  }

  /** Headers every request carries (and the websocket upgrade too). */
  authHeaders(): Record<string, string> {
    return this.options.apiKey ? { 'X-Api-Key': this.options.apiKey } : {};
  }

  serverInfo(signal?: AbortSignal): Promise<ServerInfo> {
    return this.call<ServerInfo>('GET', '/server/info', undefined, signal);
  }

  /** `GET /server/webcams/list`: the webcams Mainsail and Fluidd show (read by cameras/moonraker-source.ts). */
  webcams(signal?: AbortSignal): Promise<unknown> {
    return this.call<unknown>('GET', '/server/webcams/list', undefined, signal);
  }

  printerInfo(signal?: AbortSignal): Promise<PrinterInfo> {
    return this.call<PrinterInfo>('GET', '/printer/info', undefined, signal);
  }

  /** `POST /printer/objects/query` with the objects in the JSON body (Moonraker's recommended form). */
  async queryObjects(
    objects: Record<string, readonly string[] | null> = STATUS_OBJECTS,
    signal?: AbortSignal,
  ): Promise<ObjectStatus> {
    const result = await this.call<{ status?: ObjectStatus }>(
      'POST',
      '/printer/objects/query',
      { objects },
      signal,
    );
    return result.status ?? {};
  }

  /**
   * `POST /server/files/upload` (multipart, `root=gcodes`, `checksum`). The file is streamed from disk. Moonraker
   * answers 201 with `{item, action, …}` not wrapped in `result`; both forms are accepted.
   */
  async uploadGcode(localPath: string, remoteName: string, signal: AbortSignal): Promise<UploadedItem> {
    const { FormData } = await undici.get();
    const form: FormData = new FormData();
    form.append('root', 'gcodes');
    // Moonraker compares it with its own digest and answers 422 on a mismatch: no half-transferred prints.
    form.append('checksum', await sha256Of(localPath, signal));
    form.append('file', await openAsBlob(localPath, { type: 'text/x-gcode' }), remoteName);
    const response = await this.send('POST', '/server/files/upload', form, signal);
    const body = (await readJson(response)) as {
      item?: UploadedItem;
      result?: { item?: UploadedItem };
    } | null;
    const item = body?.item ?? body?.result?.item;
    if (!item || typeof item.path !== 'string') {
      throw new MoonrakerRequestError(
        response.status,
        'the upload answer names no uploaded file (item.path)',
      );
    }
    return item;
  }

  /** Best effort removal of a file this service uploaded (after a refused start). */
  async deleteGcode(path: string): Promise<void> {
    await this.call('DELETE', `/server/files/gcodes/${path.split('/').map(encodeURIComponent).join('/')}`);
  }

  async startPrint(filename: string): Promise<void> {
    await this.call('POST', '/printer/print/start', { filename });
  }

  async pausePrint(): Promise<void> {
    await this.call('POST', '/printer/print/pause');
  }

  async resumePrint(): Promise<void> {
    await this.call('POST', '/printer/print/resume');
  }

  async cancelPrint(): Promise<void> {
    await this.call('POST', '/printer/print/cancel');
  }

  /** `SDCARD_RESET_FILE`: Klipper forgets the finished file, `print_stats` goes back to `standby`. */
  async resetFile(): Promise<void> {
    await this.call('POST', '/printer/gcode/script', { script: 'SDCARD_RESET_FILE' });
  }

  /** Runs G-code through `POST /printer/gcode/script` (one command per line); Klipper's error is the rejection. */
  async runGcode(script: string): Promise<void> {
    await this.call('POST', '/printer/gcode/script', { script });
  }

  /** Releases the connection pool. */
  async close(): Promise<void> {
    this.closed = true;
    await this.agent?.destroy();
  }

  /**
   * A dedicated pool per printer, so close() releases its sockets and a slow printer cannot starve others.
   * After close() it is a closed one, so that a late request fails as it would on the released pool.
   */
  private async pool(): Promise<{ agent: Agent; fetch: typeof import('undici').fetch }> {
    const { Agent, fetch } = await undici.get();
    if (!this.agent) {
      this.agent = new Agent({
        connect: { timeout: this.options.timeoutMs },
        keepAliveTimeout: 4_000,
        // Moonraker answers an upload only once it has processed the file (metadata extraction).
        headersTimeout: Math.max(this.options.timeoutMs, 60_000),
        bodyTimeout: Math.max(this.options.timeoutMs, 60_000),
      });
      if (this.closed) await this.agent.destroy();
    }
    return { agent: this.agent, fetch };
  }

  private async call<T>(method: string, path: string, json?: unknown, signal?: AbortSignal): Promise<T> {
    const deadline = AbortSignal.timeout(this.options.timeoutMs);
    const response = await this.send(
      method,
      path,
      json === undefined ? undefined : JSON.stringify(json),
      signal ? AbortSignal.any([signal, deadline]) : deadline,
    );
    const body = (await readJson(response)) as { result?: T } | null;
    if (!body || !('result' in body)) {
      throw new MoonrakerRequestError(response.status, `${method} ${path}: answer has no "result"`);
    }
    return body.result as T;
  }

  private async send(
    method: string,
    path: string,
    body: string | FormData | undefined,
    signal: AbortSignal,
  ): Promise<Response> {
    const headers: Record<string, string> = { Accept: 'application/json', ...this.authHeaders() };
    if (typeof body === 'string') headers['Content-Type'] = 'application/json';
    const { agent, fetch } = await this.pool();
    let response: Response;
    try {
      response = await fetch(`${this.endpoint}${path}`, {
        method,
        headers,
        body,
        signal,
        dispatcher: agent,
      });
    } catch (error) {
      throw this.transportError(method, path, error, signal);
    }
    if (response.ok) return response;
    const text = await response.text().catch(() => '');
    throw new MoonrakerRequestError(
      response.status,
      errorMessage(response.status, response.statusText, text),
    );
  }

  private transportError(method: string, path: string, error: unknown, signal: AbortSignal): Error {
    const reason = signal.aborted ? signal.reason : undefined;
    // An abort by the caller (job cancelled) is passed through; our own deadline means "not answering".
    if (reason && !(reason instanceof DOMException && reason.name === 'TimeoutError')) return toError(reason);
    if (reason) {
      return new MoonrakerUnreachable(
        `Moonraker at ${this.endpoint} did not answer ${method} ${path} within ${this.options.timeoutMs} ms`,
      );
    }
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const detail = cause?.code ?? cause?.message ?? (error as Error).message;
    return new MoonrakerUnreachable(`cannot reach Moonraker at ${this.endpoint} (${detail})`);
  }
}

/** SHA-256 of a file as lower-case hex, streamed. */
async function sha256Of(path: string, signal: AbortSignal): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash, { signal });
  return hash.digest('hex');
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new MoonrakerRequestError(response.status, `answer is not JSON: ${text.slice(0, 120)}`);
  }
}

/** Moonraker's error body is `{"error": {"code", "message"}}`; fall back to the status line. */
function errorMessage(status: number, statusText: string, text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } };
    if (typeof parsed.error?.message === 'string' && parsed.error.message) return parsed.error.message;
  } catch {
    // Not JSON (a proxy in between, for example): the status line is all there is.
  }
  return `HTTP ${status}${statusText ? ` ${statusText}` : ''}`;
}

function toError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
