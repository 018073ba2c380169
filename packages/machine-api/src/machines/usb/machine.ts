/**
 * A Marlin printer on a USB serial port. Discovery hands it a port; it then holds one `MarlinConnection`
 * and at most one `PrintStream`. The state is what the connection shows: no port → offline, a firmware
 * `Error:` → failed until the printer answers again, a stream → running or paused, otherwise idle.
 */

import { stat } from 'node:fs/promises';
import type { Logger } from 'pino';
import {
  type ActivePrint,
  type HeaterTargets,
  type Machine,
  MachineError,
  type MachineIdentity,
  type MachineState,
  type MachineStatus,
  type PrintOutcome,
  type PrintRequest,
} from '../machine.js';
import type { UsbMachineConfig } from './config.js';
import { type ConnectionTimings, MarlinConnection, type MarlinError } from './marlin-connection.js';
import type { DiscoverableMachine, PortCriteria, PortDiscovery, SerialPortInfo } from './port-discovery.js';
import { PrintStream } from './print-stream.js';
import { variantFacts } from './variants.js';

// Marlin's default MACHINE_UUID, which says nothing about the machine.
const UNSET_UUID = '00000000-0000-0000-0000-000000000000';
// How long a halted printer gets to answer the M110 probe that would bring it back.
const RECOVERY_PROBE_MS = 2_000;

interface RunningJob {
  jobId: string;
  stream: PrintStream;
  finished: Promise<PrintOutcome>;
}

export interface UsbMachineOptions {
  id: string;
  config: UsbMachineConfig;
  /** `port` resolved against the config directory, or null to discover by VID/PID/serial. */
  fixedPort: string | null;
  discovery: PortDiscovery;
  timings: ConnectionTimings;
  logger: Logger;
}

export class UsbMachine implements Machine, DiscoverableMachine {
  readonly id: string;
  readonly printFormat = 'gcode' as const;
  readonly fixedPort: string | null;
  readonly criteria: PortCriteria;
  private readonly baud: number;
  private readonly logger: Logger;
  private port: SerialPortInfo | null = null;
  private connection: MarlinConnection | null = null;
  private job: RunningJob | null = null;
  private failure: string | null = null;
  private probing = false;

  constructor(private readonly options: UsbMachineOptions) {
    this.id = options.id;
    this.fixedPort = options.fixedPort;
    const { config } = options;
    this.criteria = {
      ...(config.vendor_id !== undefined ? { vendorId: config.vendor_id } : {}),
      ...(config.product_id !== undefined ? { productId: config.product_id } : {}),
      ...(config.serial !== undefined ? { serial: config.serial } : {}),
    };
    this.baud = config.baud ?? variantFacts(config.variant).baud;
    this.logger = options.logger.child({ machine: options.id });
  }

  identity(): MachineIdentity {
    const facts = variantFacts(this.options.config.variant);
    const fields = this.connection?.firmware.fields ?? {};
    const uuid = fields['UUID'] && fields['UUID'] !== UNSET_UUID ? fields['UUID'] : null;
    return {
      machineType: 'FusedDeposition',
      makeModel: {
        manufacturer: facts.manufacturer,
        model: fields['MACHINE_TYPE'] || facts.model,
        serial: uuid ?? this.port?.serialNumber ?? this.options.config.serial ?? null,
      },
      maxPartVolume: facts.volume,
    };
  }

  async status(): Promise<MachineStatus> {
    const connection = this.connection;
    const fields = connection?.firmware.fields ?? {};
    return {
      state: this.state(),
      progress: this.job ? this.job.stream.progress : null,
      temperatures: connection ? structuredClone(connection.temperatures) : {},
      extra: {
        Usb: {
          port: connection ? (this.port?.path ?? null) : null,
          baud: this.baud,
          variant: this.options.config.variant,
          firmware_name: fields['FIRMWARE_NAME'] ?? null,
          protocol_version: fields['PROTOCOL_VERSION'] ?? null,
          machine_type: fields['MACHINE_TYPE'] ?? null,
          uuid: fields['UUID'] ?? null,
          vendor_id: connection ? (this.port?.vendorId ?? null) : null,
          product_id: connection ? (this.port?.productId ?? null) : null,
          capabilities: connection ? { ...connection.firmware.capabilities } : {},
        },
      },
    };
  }

  private state(): MachineState {
    if (!this.connection) return { state: 'offline' };
    if (this.failure !== null) return { state: 'failed', message: this.failure };
    if (this.job) return { state: this.job.stream.isPaused ? 'paused' : 'running' };
    return { state: 'idle' };
  }

  async print(request: PrintRequest): Promise<ActivePrint> {
    this.refuseIfBusy();
    const connection = this.connection;
    if (!connection) throw new MachineError('MachineOffline', `${this.id} is not connected`);
    if (this.failure !== null) {
      throw new MachineError(
        'MachineRejected',
        `${this.id} reported an error and has not recovered: ${this.failure}`,
      );
    }
    const { size } = await stat(request.filePath);
    // Checked after the await: the job may have been cancelled, or another print accepted, meanwhile.
    if (request.signal.aborted)
      throw new MachineError('MachineRejected', 'the job was cancelled before it started');
    this.refuseIfBusy();
    if (this.connection !== connection)
      throw new MachineError('MachineOffline', `${this.id} was disconnected`);
    const stream = new PrintStream(connection, request.filePath, size, this.logger);
    const finished = stream.run().then((outcome) => {
      this.job = null;
      this.logger.info({ job: request.jobId, outcome }, 'print finished');
      return outcome;
    });
    this.job = { jobId: request.jobId, stream, finished };
    this.logger.info({ job: request.jobId, bytes: size }, 'print started');
    return { finished };
  }

  private refuseIfBusy(): void {
    if (this.job) throw new MachineError('MachineBusy', `${this.id} is busy printing job ${this.job.jobId}`);
  }

  /** Returns at once: the line in flight may be a heat-up taking minutes; nothing follows it. */
  async pause(): Promise<void> {
    if (!this.job) throw new MachineError('MachineRejected', `${this.id} is not printing`);
    this.job.stream.pause();
  }

  async resume(): Promise<void> {
    if (!this.job) throw new MachineError('MachineRejected', `${this.id} is not printing`);
    this.job.stream.resume();
  }

  async stop(): Promise<void> {
    const job = this.job;
    if (!job) throw new MachineError('MachineRejected', `${this.id} is not printing`);
    job.stream.cancel();
    await job.finished;
  }

  /** Marlin's M104/M140 (no waiting variant: the answer comes at once, the heaters warm up after it). */
  async setTemperatures(targets: HeaterTargets): Promise<void> {
    this.refuseIfBusy();
    const connection = this.connection;
    if (!connection) throw new MachineError('MachineOffline', `${this.id} is not connected`);
    if (targets.tool !== undefined) await connection.send(`M104 S${targets.tool}`);
    if (targets.bed !== undefined) await connection.send(`M140 S${targets.bed}`);
  }

  async start(): Promise<void> {
    this.options.discovery.join(this);
  }

  async close(): Promise<void> {
    await this.options.discovery.leave(this);
    const connection = this.connection;
    this.connection = null;
    await connection?.close();
    await this.job?.finished;
  }

  heldPort(): string | null {
    return this.connection ? (this.port?.path ?? null) : null;
  }

  async connect(port: SerialPortInfo): Promise<boolean> {
    try {
      const connection = await MarlinConnection.open(port.path, this.baud, this.logger, this.options.timings);
      this.port = port;
      this.failure = null;
      connection.listen({
        onFirmwareError: (message) => {
          // Marlin follows the cause with `Printer halted. kill() called!`; the cause is what matters.
          this.failure ??= message;
        },
        onAction: (action) => this.onHostAction(action),
        onLost: (error) => this.onLost(connection, error),
      });
      this.connection = connection;
      this.logger.info(
        { port: port.path, firmware: connection.firmware.fields['FIRMWARE_NAME'] },
        'printer connected',
      );
      return true;
    } catch (error) {
      this.logger.warn(
        { port: port.path, err: error instanceof Error ? error.message : error },
        'printer not usable',
      );
      return false;
    }
  }

  tick(): void {
    // A halted printer (kill(), thermal runaway) answers nothing until it is reset; once it answers again
    // it can print again.
    const connection = this.connection;
    if (this.failure === null || this.job || this.probing || !connection) return;
    this.probing = true;
    connection
      .resetLineNumbers(RECOVERY_PROBE_MS)
      .then(() => {
        if (this.connection === connection) {
          this.logger.info({ error: this.failure }, 'printer answers again after an error');
          this.failure = null;
        }
      })
      .catch(() => undefined)
      .finally(() => {
        this.probing = false;
      });
  }

  private onHostAction(action: string): void {
    const stream = this.job?.stream;
    if (!stream) return;
    if (action === 'pause' || action === 'paused') stream.pause();
    else if (action === 'resume' || action === 'resumed') stream.resume();
    else if (action === 'cancel') stream.cancel();
  }

  private onLost(connection: MarlinConnection, error: MarlinError): void {
    if (this.connection !== connection) return;
    this.logger.warn({ port: this.port?.path, reason: error.message }, 'printer connection lost');
    this.connection = null;
  }
}
