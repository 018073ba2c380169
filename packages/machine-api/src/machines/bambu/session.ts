/**
 * The MQTT session with one printer: TLS to port 8883 as `bblp` with the access code, subscribed to
 * `device/<serial>/report`, publishing commands on `device/<serial>/request`.
 *
 * Unlike the anchor it asks for a full status (`pushing.pushall`) on every connect instead of waiting for
 * the printer to volunteer one, merges delta reports, reconnects with back-off and subscribes again after
 * every disconnect, and asks again when the printer has been silent for a while.
 */

import { randomBytes } from 'node:crypto';
import type { MqttClient } from 'mqtt';
import type { Logger } from 'pino';
import { LazyModule } from '../../lazy-module.js';
import { MachineError } from '../machine.js';
import { mergeReport, type Report, stringField } from './report.js';

export interface SessionOptions {
  host: string;
  port: number;
  serial: string;
  accessCode: string;
  /** A status older than this counts as stale: the session asks for a new one at half of it. */
  staleAfterMs: number;
  logger: Logger;
}

/** `err_code` of a command refused by Authorization Control firmware outside LAN-only Developer Mode. */
const VERIFY_FAILED_CODE = 0x05024007;

/**
 * A control command refused because the firmware wants it signed (Bambu's Authorization Control, 2025):
 * only LAN-only Developer Mode lets local clients command the printer. Reports still arrive.
 */
export class ControlRefused extends MachineError {
  constructor(command: string, printerReason: string) {
    super(
      'MachineRejected',
      `the printer refuses control commands (${command}: "${printerReason}"): its firmware has Authorization Control, which lets LAN clients command it only in LAN-only Developer Mode. Enable LAN-only mode and Developer Mode on the printer's screen (Settings → Network); monitoring goes on meanwhile`,
    );
  }
}

/** The MQTT client library, loaded with the first connection (not at start-up when no Bambu is configured). */
const mqttLibrary = new LazyModule(async () => (await import('mqtt')).default);

const INITIAL_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 30_000;

/** One process-wide counter, so ids never repeat between sessions (the printer echoes them back). */
let lastSequenceId = 0;
function nextSequenceId(): number {
  lastSequenceId = lastSequenceId >= 2 ** 31 - 1 ? 1 : lastSequenceId + 1;
  return lastSequenceId;
}

interface PendingRequest {
  group: string;
  sequenceId: number;
  /** Also settles the request when a status report shows the command took effect. */
  acceptReport?: (status: Report) => boolean;
  resolve: (reply: Report | null) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

type ReportListener = (status: Report) => void;

/** Connection, status and request/acknowledgement handling for one printer. */
export class BambuSession {
  private client: MqttClient | null = null;
  private host: string;
  private attempts = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private silenceTimer: NodeJS.Timeout | null = null;
  private closed = false;
  /** Counts `connect()` calls: a connection whose library finished loading after a newer one is dropped. */
  private connects = 0;
  private readonly pending = new Set<PendingRequest>();
  private readonly listeners = new Set<ReportListener>();

  /** The last status, with every delta applied. */
  status: Report | null = null;
  /** `Date.now()` when the last status report arrived; null before the first one. */
  lastReportAt: number | null = null;
  connected = false;
  /** `Date.now()` of the last successful connect, used to tell "just connected" from "silent". */
  connectedAt: number | null = null;
  /** Why the last connection attempt failed, in words a user can act on; null while all is well. */
  problem: string | null = null;

  constructor(private readonly options: SessionOptions) {
    this.host = options.host;
  }

  get reportTopic(): string {
    return `device/${this.options.serial}/report`;
  }

  get requestTopic(): string {
    return `device/${this.options.serial}/request`;
  }

  /** Connects in the background; failures are retried with back-off until `close()`. */
  start(): void {
    this.connect();
    const checkEvery = Math.max(250, Math.floor(this.options.staleAfterMs / 4));
    this.silenceTimer = setInterval(() => this.askIfSilent(), checkEvery);
  }

  /** The printer announced a new address (DHCP): reconnect there. */
  moveTo(host: string): void {
    if (host === this.host || this.closed) return;
    this.options.logger.info({ from: this.host, to: host }, 'Bambu printer moved, reconnecting');
    this.host = host;
    this.attempts = 0;
    this.dropClient();
    this.connect();
  }

  get currentHost(): string {
    return this.host;
  }

  onReport(listener: ReportListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves true once the status satisfies `predicate` (now or in a later report), false after `timeoutMs`. */
  waitForStatus(predicate: (status: Report) => boolean, timeoutMs: number): Promise<boolean> {
    if (this.status && predicate(this.status)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        unsubscribe();
        resolve(false);
      }, timeoutMs);
      const unsubscribe = this.onReport((status) => {
        if (!predicate(status)) return;
        clearTimeout(timer);
        unsubscribe();
        resolve(true);
      });
    });
  }

  /**
   * Publishes `{<group>: {command, sequence_id, …fields}}` and waits for the printer's reply carrying the same
   * sequence id (integer or string). Rejects with `MachineError` when the printer is not connected, refuses
   * (`result: "fail"`), or stays silent for `timeoutMs`. Resolves with the reply, or null when
   * `acceptReport` saw the effect in a status report first.
   */
  request(
    group: string,
    fields: Report & { command: string },
    options: { timeoutMs: number; acceptReport?: (status: Report) => boolean },
  ): Promise<Report | null> {
    const client = this.client;
    if (!client || !this.connected) {
      return Promise.reject(
        new MachineError('MachineOffline', this.problem ?? 'the printer is not connected'),
      );
    }
    const sequenceId = nextSequenceId();
    return new Promise<Report | null>((resolve, reject) => {
      const request: PendingRequest = {
        group,
        sequenceId,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.pending.delete(request);
          reject(
            new MachineError(
              'MachineRejected',
              `the printer did not acknowledge ${group}.${fields.command} (sequence_id ${sequenceId}) within ${options.timeoutMs / 1000} s`,
            ),
          );
        }, options.timeoutMs),
        ...(options.acceptReport ? { acceptReport: options.acceptReport } : {}),
      };
      this.pending.add(request);
      const payload = JSON.stringify({ [group]: { ...fields, sequence_id: sequenceId } });
      client.publish(this.requestTopic, payload, { qos: 0, retain: false }, (error) => {
        if (!error) return;
        this.settle(request);
        reject(
          new MachineError('MachineOffline', `could not send ${group}.${fields.command}: ${error.message}`),
        );
      });
    });
  }

  /** Disconnects for good and fails every request still waiting. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    if (this.silenceTimer) clearInterval(this.silenceTimer);
    for (const request of [...this.pending]) {
      this.settle(request);
      request.reject(new MachineError('MachineOffline', 'the connection to the printer was closed'));
    }
    const client = this.client;
    this.client = null;
    this.connected = false;
    if (client) await client.endAsync(true).catch(() => undefined);
  }

  private connect(): void {
    if (this.closed) return;
    const mqtt = mqttLibrary.loaded;
    if (mqtt) {
      this.open(mqtt);
      return;
    }
    const attempt = ++this.connects;
    mqttLibrary.get().then(
      (library) => {
        if (!this.closed && attempt === this.connects) this.open(library);
      },
      (error: Error) => this.onError(error),
    );
  }

  private open(mqtt: NonNullable<typeof mqttLibrary.loaded>): void {
    this.connects++;
    const client = mqtt.connect({
      protocol: 'mqtts',
      host: this.host,
      port: this.options.port,
      username: 'bblp',
      password: this.options.accessCode,
      clientId: `machine-api-${randomBytes(4).toString('hex')}`,
      // Printers present a certificate from Bambu's private CA under the printer's serial, which no client
      // can verify by host name; every LAN client accepts it. The channel is still always TLS.
      rejectUnauthorized: false,
      protocolVersion: 4,
      keepalive: 10,
      connectTimeout: 10_000,
      // Reconnection is ours (back-off, fresh subscription, pushall), not the library's fixed period.
      reconnectPeriod: 0,
      resubscribe: false,
      clean: true,
    });
    this.client = client;
    client.on('connect', () => this.onConnect(client));
    client.on('message', (topic, payload) => this.onMessage(topic, payload));
    client.on('error', (error) => this.onError(error));
    client.on('close', () => this.onClose(client));
  }

  private onConnect(client: MqttClient): void {
    if (client !== this.client) return;
    this.connected = true;
    this.connectedAt = Date.now();
    this.attempts = 0;
    this.problem = null;
    this.options.logger.info({ host: this.host }, 'connected to Bambu printer');
    client.subscribe(this.reportTopic, { qos: 0 }, (error) => {
      if (error) {
        this.options.logger.warn({ err: error }, 'subscribing to the printer report failed');
        client.end(true);
        return;
      }
      this.askForFullStatus();
    });
  }

  private onError(error: Error & { code?: unknown }): void {
    const code = error.code;
    if (code === 4 || code === 5) {
      this.problem =
        'the printer refused the MQTT login: the access code is wrong (check access_code against the code shown on the printer)';
    } else {
      this.problem = `cannot reach the printer at ${this.host}:${this.options.port}: ${error.message}`;
    }
    this.options.logger.warn({ host: this.host, reason: this.problem }, 'Bambu printer connection failed');
  }

  private onClose(client: MqttClient): void {
    if (client !== this.client) return;
    const wasConnected = this.connected;
    this.connected = false;
    this.client = null;
    client.removeAllListeners();
    client.on('error', () => undefined);
    client.end(true);
    if (wasConnected)
      this.options.logger.warn({ host: this.host }, 'lost the connection to the Bambu printer');
    if (this.closed) return;
    const delay = Math.min(MAX_BACKOFF_MS, INITIAL_BACKOFF_MS * 2 ** this.attempts);
    this.attempts += 1;
    // Jitter keeps a room full of printers from being reconnected in lockstep after a network blip.
    this.reconnectTimer = setTimeout(() => this.connect(), delay * (0.75 + Math.random() * 0.5));
  }

  private dropClient(): void {
    const client = this.client;
    this.client = null;
    this.connected = false;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    if (client) {
      client.removeAllListeners();
      client.on('error', () => undefined);
      client.end(true);
    }
  }

  private askForFullStatus(): void {
    const client = this.client;
    if (!client || !this.connected) return;
    const payload = JSON.stringify({
      pushing: { command: 'pushall', sequence_id: nextSequenceId(), version: 1 },
    });
    client.publish(this.requestTopic, payload, { qos: 0 });
  }

  /** P1/A1 printers only report changes: an idle printer may say nothing for minutes, so ask. */
  private askIfSilent(): void {
    if (!this.connected) return;
    const since = Math.max(this.lastReportAt ?? 0, this.connectedAt ?? 0);
    if (Date.now() - since >= this.options.staleAfterMs / 2) this.askForFullStatus();
  }

  private onMessage(topic: string, payload: Buffer): void {
    if (topic !== this.reportTopic) return;
    let message: unknown;
    try {
      message = JSON.parse(payload.toString('utf8'));
    } catch {
      this.options.logger.debug({ bytes: payload.length }, 'ignored a report that is not JSON');
      return;
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) return;
    for (const [group, body] of Object.entries(message as Report)) {
      if (typeof body !== 'object' || body === null || Array.isArray(body)) continue;
      const content = body as Report;
      if (group === 'print' && stringField(content, 'command') === 'push_status') this.onStatus(content);
      else this.onReply(group, content);
    }
  }

  private onStatus(report: Report): void {
    const { command: _command, sequence_id: _sequenceId, msg: _msg, ...fields } = report;
    this.status = mergeReport(this.status ?? {}, fields);
    this.lastReportAt = Date.now();
    for (const request of [...this.pending]) {
      if (request.acceptReport?.(this.status)) {
        this.settle(request);
        request.resolve(null);
      }
    }
    for (const listener of [...this.listeners]) listener(this.status);
  }

  private onReply(group: string, reply: Report): void {
    const id = reply.sequence_id;
    for (const request of this.pending) {
      // Printers echo the id as a string on some firmware; the value is what identifies the request.
      if (request.group !== group || (id !== request.sequenceId && id !== String(request.sequenceId)))
        continue;
      this.settle(request);
      const result = stringField(reply, 'result')?.toLowerCase();
      if (result === 'fail' || result === 'failed' || result === 'error') {
        const reason = stringField(reply, 'reason') ?? stringField(reply, 'err_code') ?? 'no reason given';
        if (reply.err_code === VERIFY_FAILED_CODE || /verif(y|ication) fail/i.test(reason)) {
          request.reject(new ControlRefused(`${group}.${reply.command}`, reason));
          return;
        }
        request.reject(
          new MachineError('MachineRejected', `the printer refused ${group}.${reply.command}: ${reason}`),
        );
      } else request.resolve(reply);
      return;
    }
  }

  private settle(request: PendingRequest): void {
    clearTimeout(request.timer);
    this.pending.delete(request);
  }
}
