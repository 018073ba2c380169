/**
 * One open serial connection to a Marlin printer: the handshake (`M110 N0`, `M115`, `M155`), numbered and
 * checksummed sending with resend recovery, temperature tracking and firmware messages.
 *
 * Sending is ping-pong, one line in flight, which is OctoPrint's default: Marlin empties its receive buffer
 * after a line error, so lines sent behind a corrupted one would vanish without an answer; with one line in
 * flight every `ok` and every `Resend:` refers to a line the host can name.
 */

import type { Logger } from 'pino';
import type { Temperature } from '../machine.js';
import { type FirmwareMessage, frameLine, parseFirmwareLine } from './marlin-protocol.js';
import type { ReadlineParser, SerialPortStream } from './serial-port.js';
import { serialportLibrary } from './serialport-library.js';

/** Why a command could not be completed. */
export class MarlinError extends Error {
  constructor(
    /** `firmware`: the printer said `Error:`; `disconnected`: the port went away; `timeout`: no answer. */
    readonly reason: 'firmware' | 'disconnected' | 'timeout' | 'closed',
    message: string,
  ) {
    super(message);
    this.name = 'MarlinError';
  }
}

export interface ConnectionTimings {
  /** How long the firmware may stay silent with a line in flight before the host prods it with `M105`. */
  responseTimeoutMs: number;
  /** Consecutive unanswered prods before the connection is given up. */
  maxSilentProds: number;
  /** How long to wait for the first `ok` after opening (boards reset on open and boot for a few seconds). */
  handshakeTimeoutMs: number;
  /** Interval of temperature reports (`M155 S…`, or `M105` polling when auto-report is missing). */
  temperatureIntervalS: number;
}

export const defaultTimings: ConnectionTimings = {
  responseTimeoutMs: 30_000,
  maxSilentProds: 5,
  handshakeTimeoutMs: 15_000,
  temperatureIntervalS: 2,
};

/** What `M115` told about the firmware. */
export interface FirmwareReport {
  fields: Record<string, string>;
  capabilities: Record<string, boolean>;
}

export interface ConnectionListener {
  /** The firmware reported a fatal `Error:` (not a line error); pending commands were rejected. */
  onFirmwareError(message: string): void;
  /** A `//action:` host action (pause, resume, cancel, …). */
  onAction(action: string, argument: string): void;
  /** The port closed underneath (unplugged) or the printer stopped answering. */
  onLost(error: MarlinError): void;
}

interface PendingCommand {
  command: string;
  resolve(): void;
  reject(error: MarlinError): void;
}

interface InFlight extends PendingCommand {
  lineNumber: number;
}

// The firmware may ask for any line still in flight; with ping-pong that is the last one or two.
const HISTORY_LINES = 64;
const RESET_LINE_NUMBERS = 'M110 N0';
// Commands that wait for a temperature: hotend, bed, chamber, PID autotune.
const HEATING_WAIT = /^M(109|190|191|303)\b/;

export class MarlinConnection {
  readonly firmware: FirmwareReport = { fields: {}, capabilities: {} };
  readonly temperatures: Record<string, Temperature> = {};
  private readonly queue: PendingCommand[] = [];
  private readonly history = new Map<number, string>();
  private inFlight: InFlight | null = null;
  private nextLineNumber = 1;
  private ready = false;
  private resendCursor: number | null = null;
  private lastHeardAt = Date.now();
  private silentProds = 0;
  private watchdog: NodeJS.Timeout | null = null;
  private poller: NodeJS.Timeout | null = null;
  private pollPending = false;
  private closed = false;
  private listener: ConnectionListener | null = null;

  private constructor(
    private readonly port: SerialPortStream,
    private readonly logger: Logger,
    private readonly timings: ConnectionTimings,
  ) {}

  /** Opens `path`, performs the handshake and starts temperature reports. Rejects when nobody answers. */
  static async open(
    path: string,
    baudRate: number,
    logger: Logger,
    timings: ConnectionTimings,
  ): Promise<MarlinConnection> {
    const { openSerialPort, ReadlineParser } = await serialportLibrary.get();
    const port = await openSerialPort(path, baudRate);
    const connection = new MarlinConnection(port, logger, timings);
    connection.attach(new ReadlineParser({ delimiter: '\n', encoding: 'latin1' }));
    try {
      await connection.handshake();
    } catch (error) {
      await connection.close();
      throw error;
    }
    return connection;
  }

  /** Receives firmware events from now on. */
  listen(listener: ConnectionListener): void {
    this.listener = listener;
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** Sends one command with a line number and checksum; resolves when the firmware has acknowledged it. */
  send(command: string): Promise<void> {
    if (this.closed) return Promise.reject(new MarlinError('closed', 'the connection is closed'));
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ command, resolve, reject });
      this.pump();
    });
  }

  /** Resets line numbering with `M110 N0`; resolves when the firmware answers within `timeoutMs`. */
  async resetLineNumbers(timeoutMs: number): Promise<void> {
    const reset = this.send(RESET_LINE_NUMBERS);
    const timer = setTimeout(
      () => this.abandonInFlight(new MarlinError('timeout', 'no answer to M110')),
      timeoutMs,
    );
    try {
      await reset;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes the port; every pending command is rejected. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.shutdown(new MarlinError('closed', 'the connection was closed'));
    if (this.port.isOpen) await new Promise<void>((resolve) => this.port.close(() => resolve()));
  }

  private attach(parser: ReadlineParser): void {
    const lines = this.port.pipe(parser);
    lines.on('data', (line: string) => this.receive(line.replace(/\r$/, '')));
    this.port.on('close', () => {
      if (!this.closed) this.lose(new MarlinError('disconnected', 'the printer was disconnected'));
    });
    this.port.on('error', (error) => this.logger.warn({ err: error }, 'serial port error'));
    this.watchdog = setInterval(() => this.checkSilence(), Math.max(50, this.timings.responseTimeoutMs / 4));
  }

  private async handshake(): Promise<void> {
    // A board that resets on open drops what arrives while it boots: repeat M110 until it answers.
    const deadline = Date.now() + this.timings.handshakeTimeoutMs;
    for (;;) {
      try {
        await this.resetLineNumbers(Math.min(2_000, Math.max(1, deadline - Date.now())));
        break;
      } catch (error) {
        if (!(error instanceof MarlinError) || error.reason !== 'timeout' || Date.now() >= deadline) {
          throw error instanceof MarlinError && error.reason === 'timeout'
            ? new MarlinError(
                'timeout',
                'the printer did not answer M110 (is it a Marlin printer at this baud rate?)',
              )
            : error;
        }
      }
    }
    this.ready = true;
    await this.send('M115');
    if (this.firmware.capabilities['AUTOREPORT_TEMP']) {
      await this.send(`M155 S${this.timings.temperatureIntervalS}`);
    } else {
      this.poller = setInterval(() => this.pollTemperatures(), this.timings.temperatureIntervalS * 1000);
    }
  }

  private pollTemperatures(): void {
    if (this.pollPending || this.closed) return;
    this.pollPending = true;
    this.send('M105')
      .catch(() => undefined)
      .finally(() => {
        this.pollPending = false;
      });
  }

  private pump(): void {
    if (this.inFlight || this.closed) return;
    const next = this.queue.shift();
    if (!next) return;
    // `N0 M110 N0`: Marlin skips the line-number check for M110 and expects line 1 next.
    const lineNumber = next.command === RESET_LINE_NUMBERS ? 0 : this.nextLineNumber++;
    if (lineNumber === 0) this.nextLineNumber = 1;
    const framed = frameLine(lineNumber, next.command);
    this.history.set(lineNumber, framed);
    this.history.delete(lineNumber - HISTORY_LINES);
    this.inFlight = { ...next, lineNumber };
    this.resendCursor = null;
    this.lastHeardAt = Date.now();
    this.write(framed);
  }

  private write(framed: string): void {
    this.logger.trace({ send: framed }, 'send');
    this.port.write(Buffer.from(`${framed}\n`, 'latin1'));
  }

  private receive(line: string): void {
    this.logger.trace({ recv: line }, 'recv');
    const message = parseFirmwareLine(line);
    // Auto-reported temperatures keep coming while an `ok` is lost, so they are no sign that the line in
    // flight is being worked on, except during a heat-up wait, whose only sign of life they are.
    if (message.kind !== 'temperature' || HEATING_WAIT.test(this.inFlight?.command ?? '')) {
      this.lastHeardAt = Date.now();
      this.silentProds = 0;
    }
    this.handle(message);
  }

  private handle(message: FirmwareMessage): void {
    switch (message.kind) {
      case 'ok':
        Object.assign(this.temperatures, message.temperatures);
        this.acknowledge();
        return;
      case 'resend':
        this.requestResend(message.lineNumber);
        return;
      case 'temperature':
        Object.assign(this.temperatures, message.temperatures);
        return;
      case 'firmware-info':
        Object.assign(this.firmware.fields, message.fields);
        return;
      case 'capability':
        this.firmware.capabilities[message.name] = message.enabled;
        return;
      case 'error':
        this.logger.error({ firmware: message.message }, 'firmware error');
        this.failPending(new MarlinError('firmware', message.message));
        this.listener?.onFirmwareError(message.message);
        return;
      case 'action':
        this.logger.info({ action: message.action, argument: message.argument }, 'host action from firmware');
        this.listener?.onAction(message.action, message.argument);
        return;
      case 'start':
        // A boot banner: while connecting, the board reset on open and lost our M110; later, the firmware
        // rebooted and forgot its line numbers, its auto-reports and everything in flight.
        if (!this.ready) {
          if (this.inFlight?.command === RESET_LINE_NUMBERS) this.write(this.history.get(0)!);
        } else {
          this.lose(new MarlinError('disconnected', 'the printer restarted'));
        }
        return;
      case 'busy':
      case 'line-error':
        this.logger.debug({ firmware: message }, 'firmware message');
        return;
      case 'echo':
      case 'other':
        this.logger.debug({ firmware: message.text }, 'firmware message');
        return;
    }
  }

  /** An `ok`: either the cue to retransmit during a resend, or the acknowledgement of the line in flight. */
  private acknowledge(): void {
    const inFlight = this.inFlight;
    if (!inFlight) return; // An ok for a prod or a line the host already gave up on.
    if (this.resendCursor !== null) {
      const lineNumber = this.resendCursor;
      this.resendCursor = lineNumber === inFlight.lineNumber ? null : lineNumber + 1;
      this.write(this.history.get(lineNumber)!);
      return;
    }
    this.inFlight = null;
    inFlight.resolve();
    this.pump();
  }

  private requestResend(lineNumber: number): void {
    const inFlight = this.inFlight;
    // A request beyond the line in flight means that line arrived; its ok follows.
    if (!inFlight || lineNumber > inFlight.lineNumber) return;
    if (!this.history.has(lineNumber)) {
      this.failPending(
        new MarlinError('firmware', `the printer asked to resend line ${lineNumber}, which is too old`),
      );
      return;
    }
    this.logger.info({ line: lineNumber }, 'firmware requested a resend');
    this.resendCursor = lineNumber;
  }

  private checkSilence(): void {
    if (!this.inFlight || Date.now() - this.lastHeardAt < this.timings.responseTimeoutMs) return;
    if (this.silentProds >= this.timings.maxSilentProds) {
      const seconds = Math.round((this.timings.responseTimeoutMs * (this.silentProds + 1)) / 1000);
      this.lose(new MarlinError('timeout', `the printer stopped answering (${seconds} s without a reply)`));
      return;
    }
    // Like OctoPrint: an unnumbered M105 makes the firmware answer `ok`, which stands in for an `ok` lost on
    // the line; if the line itself was lost, the next numbered line draws a `Resend:` for it.
    this.silentProds++;
    this.lastHeardAt = Date.now();
    this.logger.warn({ line: this.inFlight.lineNumber }, 'no answer from the printer, sending M105');
    this.port.write('M105\n');
  }

  private abandonInFlight(error: MarlinError): void {
    const inFlight = this.inFlight;
    if (!inFlight) return;
    this.inFlight = null;
    this.resendCursor = null;
    inFlight.reject(error);
    this.pump();
  }

  private failPending(error: MarlinError): void {
    const pending = [...(this.inFlight ? [this.inFlight] : []), ...this.queue.splice(0)];
    this.inFlight = null;
    this.resendCursor = null;
    for (const command of pending) command.reject(error);
  }

  private lose(error: MarlinError): void {
    if (this.closed) return;
    this.shutdown(error);
    this.listener?.onLost(error);
    if (this.port.isOpen) this.port.close(() => undefined);
  }

  private shutdown(error: MarlinError): void {
    this.closed = true;
    if (this.watchdog) clearInterval(this.watchdog);
    if (this.poller) clearInterval(this.poller);
    this.failPending(error);
  }
}
