/**
 * Moonraker's websocket as a JSON-RPC 2.0 channel (docs/external_api/introduction.md): opening it with the
 * client's credentials, calls with a deadline matched to their answers by id, and what is left of a
 * message once it is not an answer (a notification). ./feed.ts decides what the calls and notifications
 * mean.
 */

import type WebSocket from 'ws';
import { LazyModule } from '../../lazy-module.js';
import { type MoonrakerClient, MoonrakerRequestError } from './client.js';

/** The websocket library, loaded with the first connection to a Moonraker (not at start-up). */
const websocketLibrary = new LazyModule(async () => (await import('ws')).default);

/** A JSON-RPC message from Moonraker: an answer (`id`) or a notification (`method`, `params`). */
export interface RpcMessage {
  id?: number;
  method?: string;
  params?: unknown[];
  result?: unknown;
  error?: { message?: string };
}

interface PendingCall {
  /**
   * Runs inside the message handler, before any later message on the socket is handled. Object status
   * must be applied here: a `notify_status_update` arriving in the same chunk would otherwise be merged
   * first and then overwritten by the older full status when the promise continuation runs.
   */
  apply?: (result: unknown) => void;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** Opens `<endpoint>/websocket`; rejects on a refused upgrade or when the handshake outlasts `timeoutMs`. */
export async function openWebsocket(client: MoonrakerClient, timeoutMs: number): Promise<WebSocket> {
  const url = `${client.endpoint.replace(/^http/, 'ws')}/websocket`;
  const WebSocket = await websocketLibrary.get();
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, {
      headers: client.authHeaders(),
      handshakeTimeout: timeoutMs,
      perMessageDeflate: false,
    });
    socket.once('open', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
    socket.once('unexpected-response', (_request, response) => {
      response.resume();
      socket.terminate();
      reject(new Error(`websocket upgrade refused with HTTP ${response.statusCode}`));
    });
  });
}

/** The calls in flight on one websocket at a time; a call without an answer in time ends the socket. */
export class RpcCalls {
  private readonly pending = new Map<number, PendingCall>();
  private nextId = 1;

  constructor(private readonly timeoutMs: number) {}

  call(
    socket: WebSocket | null,
    method: string,
    params?: Record<string, unknown>,
    apply?: (result: unknown) => void,
  ): Promise<unknown> {
    if (!socket || socket.readyState !== socket.OPEN) return Promise.reject(new Error('websocket not open'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`no answer to ${method} within ${this.timeoutMs} ms`));
        socket.terminate();
      }, this.timeoutMs);
      this.pending.set(id, { apply, resolve, reject, timer });
      socket.send(JSON.stringify({ jsonrpc: '2.0', method, ...(params ? { params } : {}), id }));
    });
  }

  /** Settles the call `message` answers; false when it answers none (a notification). */
  settle(message: RpcMessage): boolean {
    if (typeof message.id !== 'number') return false;
    const call = this.pending.get(message.id);
    if (!call) return false;
    this.pending.delete(message.id);
    clearTimeout(call.timer);
    if (message.error) {
      call.reject(new MoonrakerRequestError(0, message.error.message ?? 'JSON-RPC error'));
    } else {
      call.apply?.(message.result);
      call.resolve(message.result);
    }
    return true;
  }

  /** Fails every call in flight (the socket closed). */
  rejectAll(error: Error): void {
    for (const call of this.pending.values()) {
      clearTimeout(call.timer);
      call.reject(error);
    }
    this.pending.clear();
  }
}
