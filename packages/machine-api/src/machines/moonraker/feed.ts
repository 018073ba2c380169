/**
 * A live picture of one Moonraker: reachability, Klippy's state and the printer objects of
 * `STATUS_OBJECTS`. It follows Moonraker's documented start-up sequence (docs/external_api/introduction.md
 * "Websocket setup"): ask `/server/info`, then subscribe over the websocket with
 * `printer.objects.subscribe` and merge `notify_status_update` diffs. When the websocket cannot be opened
 * it polls `/printer/objects/query` instead and tries the websocket again later. A Moonraker that does
 * not answer (refused, reset, no pong or no HTTP answer within the deadline) is marked unreachable at once,
 * and the feed keeps retrying until it is closed. The websocket's JSON-RPC calls are in ./json-rpc.ts.
 */

import type { Logger } from 'pino';
import type WebSocket from 'ws';
import {
  type MoonrakerClient,
  MoonrakerRequestError,
  type ObjectStatus,
  type PrinterInfo,
  type ServerInfo,
  STATUS_OBJECTS,
} from './client.js';
import { openWebsocket, RpcCalls, type RpcMessage } from './json-rpc.js';
import { mergeStatus } from './status.js';

export interface FeedSnapshot {
  /** The last exchange with Moonraker succeeded. */
  reachable: boolean;
  /** When Moonraker stopped answering (ms since epoch); null while reachable. */
  unreachableSince: number | null;
  /** Why Moonraker is unreachable, for messages. */
  lastError: string | null;
  transport: 'websocket' | 'polling' | 'none';
  server: ServerInfo | null;
  printer: PrinterInfo | null;
  /** `ready`, `startup`, `error`, `shutdown` or `disconnected` (Moonraker up, Klippy not connected). */
  klippyState: string;
  klippyMessage: string;
  objects: ObjectStatus;
}

export interface FeedOptions {
  /** Deadline of each request and of each websocket pong. */
  timeoutMs: number;
  /** Interval of HTTP polling and of websocket pings. */
  pollIntervalMs: number;
  /** Wait before trying again after Moonraker stopped answering. */
  reconnectDelayMs: number;
  /** While polling, how often the websocket is tried again. */
  websocketRetryMs: number;
  logger: Logger;
}

type Listener = (snapshot: FeedSnapshot) => void;

export class StatusFeed {
  private state: FeedSnapshot = {
    reachable: false,
    unreachableSince: null,
    lastError: null,
    transport: 'none',
    server: null,
    printer: null,
    klippyState: 'disconnected',
    klippyMessage: '',
    objects: {},
  };
  private readonly listeners = new Set<Listener>();
  private readonly webcamListeners = new Set<() => void>();
  private readonly stopping = new AbortController();
  private firstAttempt!: Promise<void>;
  private firstAttemptDone: () => void = () => {};
  private loop: Promise<void> | null = null;
  private socket: WebSocket | null = null;
  /** The websocket carries a live subscription: notifications keep `objects` current. */
  private subscribed = false;
  private readonly calls: RpcCalls;

  constructor(
    private readonly client: MoonrakerClient,
    private readonly options: FeedOptions,
  ) {
    this.calls = new RpcCalls(options.timeoutMs);
    this.firstAttempt = new Promise((resolve) => {
      this.firstAttemptDone = resolve;
    });
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Resolves once the first connection attempt has succeeded or failed. */
  settled(): Promise<void> {
    return this.firstAttempt;
  }

  snapshot(): FeedSnapshot {
    return { ...this.state };
  }

  /** Calls `listener` when Moonraker announces `notify_webcams_changed`. */
  onWebcamsChanged(listener: () => void): () => void {
    this.webcamListeners.add(listener);
    return () => this.webcamListeners.delete(listener);
  }

  /** Calls `listener` after every change; returns the unsubscribe function. */
  onUpdate(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Asks Moonraker right now (before a decision such as starting a print); throws when it cannot. Over the
   * websocket when subscribed, so the answer is ordered with the status notifications on that socket.
   */
  async refresh(): Promise<FeedSnapshot> {
    try {
      if (this.subscribed) {
        await this.rpcHandshake();
        if (this.state.klippyState === 'ready') {
          await this.rpc('printer.objects.query', { objects: STATUS_OBJECTS }, (result) =>
            this.applyObjects((result as { status?: ObjectStatus }).status ?? {}, true),
          );
        }
      } else {
        await this.handshake();
        if (this.state.klippyState === 'ready') this.applyObjects(await this.client.queryObjects(), true);
      }
      this.emit();
      return this.snapshot();
    } catch (error) {
      if (!(error instanceof MoonrakerRequestError)) this.markUnreachable(error);
      throw error;
    }
  }

  async close(): Promise<void> {
    this.stopping.abort();
    this.socket?.terminate();
    await this.loop;
    this.listeners.clear();
  }

  private async run(): Promise<void> {
    const signal = this.stopping.signal;
    while (!signal.aborted) {
      try {
        await this.handshake();
        this.emit();
        if (this.state.klippyState !== 'ready') this.firstAttemptDone();
        const socket = await openWebsocket(this.client, this.options.timeoutMs).catch((error: Error) => {
          this.options.logger.debug(
            { err: error.message },
            'Moonraker websocket unavailable, polling instead',
          );
          return null;
        });
        if (socket) await this.followWebsocket(socket);
        // Also after a dropped websocket: polling notices at once whether Moonraker itself is gone.
        if (this.state.reachable && !signal.aborted) await this.poll();
        if (this.state.reachable) continue;
      } catch (error) {
        this.markUnreachable(error);
      }
      this.firstAttemptDone();
      await pause(this.options.reconnectDelayMs, signal);
    }
  }

  /** `server.info`, then `printer.info` when Klippy is connected, over the websocket. */
  private async rpcHandshake(): Promise<void> {
    const server = (await this.rpc('server.info')) as ServerInfo;
    this.state.server = server;
    if (!server.klippy_connected) {
      this.setKlippy('disconnected', 'Moonraker is not connected to Klippy');
      return;
    }
    const printer = (await this.rpc('printer.info')) as PrinterInfo;
    this.state.printer = printer;
    this.setKlippy(printer.state, printer.state_message);
  }

  /** `GET /server/info`, then `GET /printer/info` when Klippy is connected. */
  private async handshake(): Promise<void> {
    const server = await this.client.serverInfo(this.stopping.signal);
    this.markReachable();
    this.state.server = server;
    if (!server.klippy_connected) {
      this.setKlippy('disconnected', 'Moonraker is not connected to Klippy');
      return;
    }
    const printer = await this.client.printerInfo(this.stopping.signal);
    this.state.printer = printer;
    this.setKlippy(printer.state, printer.state_message);
  }

  /** Runs until the socket closes; pings it so a hung Moonraker is noticed within the deadline. */
  private async followWebsocket(socket: WebSocket): Promise<void> {
    this.socket = socket;
    let awaitingPong = false;
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const stop = () => socket.terminate();
    this.stopping.signal.addEventListener('abort', stop, { once: true });
    if (this.stopping.signal.aborted) stop();
    socket.on('error', () => socket.terminate());
    socket.on('message', (data) => this.onMessage(data.toString()));
    socket.on('pong', () => {
      awaitingPong = false;
      this.markReachable();
    });
    const heartbeat = setInterval(
      () => {
        if (awaitingPong) {
          this.markUnreachable(new Error(`no websocket pong within ${this.options.timeoutMs} ms`));
          socket.terminate();
          return;
        }
        awaitingPong = true;
        socket.ping();
        // Klippy not ready yet, or its notification was missed: ask again rather than wait for an event.
        if (!this.subscribed) this.onKlippyChange();
      },
      Math.max(this.options.timeoutMs, this.options.pollIntervalMs),
    );
    try {
      this.state.transport = 'websocket';
      await this.rpc('server.connection.identify', {
        client_name: 'machine-api',
        version: '0.1.0',
        type: 'other',
        url: 'https://github.com/KittyCAD/machine-api',
      }).catch(() => undefined);
      await this.subscribe();
      this.emit();
      this.firstAttemptDone();
      await closed;
    } catch (error) {
      socket.terminate();
      await closed;
      throw error;
    } finally {
      clearInterval(heartbeat);
      this.stopping.signal.removeEventListener('abort', stop);
      this.socket = null;
      this.subscribed = false;
      this.calls.rejectAll(new Error('websocket closed'));
      this.state.transport = 'none';
    }
  }

  /** Subscribes when Klippy is ready; otherwise `notify_klippy_ready` triggers it later. */
  private async subscribe(): Promise<void> {
    if (this.state.klippyState !== 'ready') return;
    await this.rpc('printer.objects.subscribe', { objects: STATUS_OBJECTS }, (result) =>
      this.applyObjects((result as { status?: ObjectStatus }).status ?? {}, true),
    );
    this.subscribed = true;
  }

  private onMessage(text: string): void {
    let message: RpcMessage;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    this.markReachable();
    if (this.calls.settle(message)) return;
    switch (message.method) {
      case 'notify_status_update': {
        const diff = message.params?.[0];
        if (diff && typeof diff === 'object') this.applyObjects(diff as ObjectStatus, false);
        break;
      }
      case 'notify_klippy_disconnected':
        this.setKlippy('disconnected', 'Moonraker lost its connection to Klippy');
        this.subscribed = false;
        break;
      case 'notify_klippy_shutdown':
      case 'notify_klippy_ready':
        this.onKlippyChange();
        return;
      case 'notify_webcams_changed':
        for (const listener of this.webcamListeners) listener();
        return;
      default:
        return;
    }
    this.emit();
  }

  /** Klippy (re)started or shut down: read its state and message, and subscribe again when ready. */
  private onKlippyChange(): void {
    this.rpcHandshake()
      .then(async () => {
        await this.subscribe();
        this.emit();
      })
      .catch((error: Error) =>
        this.options.logger.debug({ err: error.message }, 'Klippy state refresh failed'),
      );
  }

  /** Polls over HTTP until Moonraker stops answering, the feed closes, or it is time to retry the websocket. */
  private async poll(): Promise<void> {
    this.state.transport = 'polling';
    const signal = this.stopping.signal;
    const retryWebsocketAt = Date.now() + this.options.websocketRetryMs;
    try {
      while (!signal.aborted && Date.now() < retryWebsocketAt) {
        if (this.state.klippyState === 'ready') {
          this.applyObjects(await this.client.queryObjects(STATUS_OBJECTS, signal), true);
        }
        this.emit();
        this.firstAttemptDone();
        await pause(this.options.pollIntervalMs, signal);
        await this.handshake();
      }
    } catch (error) {
      if (!signal.aborted) this.markUnreachable(error);
    } finally {
      this.state.transport = 'none';
    }
  }

  private rpc(
    method: string,
    params?: Record<string, unknown>,
    apply?: (result: unknown) => void,
  ): Promise<unknown> {
    return this.calls.call(this.socket, method, params, apply);
  }

  private applyObjects(objects: ObjectStatus, complete: boolean): void {
    if (complete) this.state.objects = {};
    mergeStatus(this.state.objects, objects);
    const webhooks = this.state.objects['webhooks'];
    if (typeof webhooks?.['state'] === 'string' && this.state.klippyState !== 'disconnected') {
      const message = webhooks['state_message'];
      this.setKlippy(webhooks['state'], typeof message === 'string' ? message : this.state.klippyMessage);
    }
  }

  private setKlippy(state: string, message: string): void {
    this.state.klippyState = state;
    this.state.klippyMessage = message;
  }

  private markReachable(): void {
    if (this.state.reachable) return;
    if (this.state.unreachableSince !== null) {
      this.options.logger.info({ endpoint: this.client.endpoint }, 'Moonraker answers again');
    }
    Object.assign(this.state, { reachable: true, unreachableSince: null, lastError: null });
  }

  private markUnreachable(error: unknown): void {
    if (this.stopping.signal.aborted) return;
    const message = error instanceof Error ? error.message : String(error);
    if (this.state.reachable || this.state.unreachableSince === null) {
      this.options.logger.warn({ endpoint: this.client.endpoint, err: message }, 'Moonraker does not answer');
    }
    Object.assign(this.state, {
      reachable: false,
      unreachableSince: this.state.unreachableSince ?? Date.now(),
      lastError: message,
      transport: 'none',
    });
    this.emit();
  }

  private emit(): void {
    const snapshot = this.state;
    for (const listener of this.listeners) listener(snapshot);
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
