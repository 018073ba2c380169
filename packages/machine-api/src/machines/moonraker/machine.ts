/**
 * A Klipper printer behind Moonraker, as a `Machine`: status from the live feed (websocket subscription or
 * polling), prints as upload + start, and each started print followed until `print_stats` says how it ended.
 */

import type { Logger } from 'pino';
import {
  type ActivePrint,
  type HeaterTargets,
  type Machine,
  MachineError,
  type MachineIdentity,
  type MachineStatus,
  type MoonrakerCamera,
  type PrintOutcome,
  type PrintRequest,
} from '../machine.js';
import { MoonrakerClient, MoonrakerRequestError, MoonrakerUnreachable } from './client.js';
import { type FeedSnapshot, StatusFeed } from './feed.js';
import { remoteFileName } from './file-name.js';
import { PrintFollower } from './print-follower.js';
import { machineStateOf, printStatsOf, progressOf, temperaturesOf } from './status.js';
import { type MoonrakerVariant, variantFacts } from './variant.js';

export interface MoonrakerSettings {
  endpoint: string;
  variant: MoonrakerVariant;
  apiKey?: string;
  /** Deadline of each request; a Moonraker not answering within it is `offline`. */
  timeoutMs: number;
  pollIntervalMs: number;
  reconnectDelayMs: number;
  websocketRetryMs: number;
  /** How long Moonraker may be gone during a print before the job fails. */
  lostPrintGraceMs: number;
  /** The printer's web host, which relative webcam URLs resolve against. */
  cameraBaseUrl: string;
}

interface ActiveJob {
  filename: string;
  follower: PrintFollower;
  settle: (outcome: PrintOutcome) => void;
  /** Re-decides periodically: grace periods run out while nothing arrives from a vanished Moonraker. */
  recheck: NodeJS.Timeout;
  unsubscribe: () => void;
}

export class MoonrakerMachine implements Machine {
  readonly printFormat = 'gcode' as const;
  private readonly client: MoonrakerClient;
  private readonly feed: StatusFeed;
  private readonly logger: Logger;
  /** A print is being handed over (upload + start) or followed: one at a time. */
  private busy = false;
  private active: ActiveJob | null = null;
  private readonly webcams: MoonrakerCamera;

  constructor(
    readonly id: string,
    private readonly settings: MoonrakerSettings,
    logger: Logger,
  ) {
    this.logger = logger.child({ machine: id });
    this.client = new MoonrakerClient({
      endpoint: settings.endpoint,
      apiKey: settings.apiKey,
      timeoutMs: settings.timeoutMs,
    });
    this.feed = new StatusFeed(this.client, {
      timeoutMs: settings.timeoutMs,
      pollIntervalMs: settings.pollIntervalMs,
      reconnectDelayMs: settings.reconnectDelayMs,
      websocketRetryMs: settings.websocketRetryMs,
      logger: this.logger,
    });
    this.webcams = {
      kind: 'moonraker',
      baseUrl: settings.cameraBaseUrl,
      listWebcams: (signal) => this.client.webcams(signal),
      onWebcamsChanged: (listener) => this.feed.onWebcamsChanged(listener),
    };
  }

  camera(): MoonrakerCamera {
    return this.webcams;
  }

  identity(): MachineIdentity {
    const facts = variantFacts(this.settings.variant);
    return { machineType: 'FusedDeposition', makeModel: facts.makeModel, maxPartVolume: facts.volume };
  }

  async start(): Promise<void> {
    this.feed.start();
  }

  async status(): Promise<MachineStatus> {
    // Right after start-up, wait (briefly, within the service's status deadline) for the first answer
    // instead of reporting a guess; a Moonraker that takes longer is offline until it answers.
    await settledWithin(this.feed.settled(), Math.min(this.settings.timeoutMs, 2_000));
    const snapshot = this.feed.snapshot();
    const extra = { ExtraKindA: this.extraOf(snapshot) };
    if (!snapshot.reachable) return { state: { state: 'offline' }, progress: null, temperatures: {}, extra };
    const stats = printStatsOf(snapshot.objects);
    return {
      state: machineStateOf(snapshot.klippyState, snapshot.klippyMessage, stats),
      progress: progressOf(snapshot.objects, stats),
      temperatures: temperaturesOf(snapshot.objects),
      extra,
    };
  }

  async print(request: PrintRequest): Promise<ActivePrint> {
    if (this.busy) throw new MachineError('MachineBusy', `machine ${this.id} is already running a job`);
    this.busy = true;
    try {
      await this.ensureReady();
      const name = remoteFileName(request.jobName, request.jobId);
      const item = await this.upload(request, name);
      if (request.signal.aborted) {
        await this.removeQuietly(item.path);
        throw request.signal.reason;
      }
      const startedAt = Date.now();
      try {
        await this.client.startPrint(item.path);
      } catch (error) {
        await this.removeQuietly(item.path);
        throw asMachineError(error, `Moonraker refused to start ${item.path}`);
      }
      this.logger.info({ file: item.path, job: request.jobId }, 'print started on Moonraker');
      return { finished: this.follow(item.path, startedAt) };
    } catch (error) {
      this.busy = false;
      throw error;
    }
  }

  async followAgain(job: { jobId: string; jobName: string }): Promise<ActivePrint | null> {
    if (this.busy) return null;
    let snapshot: FeedSnapshot;
    try {
      snapshot = await this.feed.refresh();
    } catch {
      return null;
    }
    const name = remoteFileName(job.jobName, job.jobId);
    const stats = printStatsOf(snapshot.objects);
    // Klipper keeps the last file's name and how it ended until the bed is cleared (SDCARD_RESET_FILE).
    if (!stats || stats.filename !== name || !FOLLOWABLE.includes(stats.state)) return null;
    this.busy = true;
    this.logger.info({ file: name, job: job.jobId, state: stats.state }, 'following a print again');
    return { finished: this.follow(name, Date.now()) };
  }

  async pause(): Promise<void> {
    await this.control('pause', ['printing'], () => this.client.pausePrint());
  }

  async resume(): Promise<void> {
    await this.control('resume', ['paused'], () => this.client.resumePrint());
  }

  async stop(): Promise<void> {
    await this.control('cancel', ['printing', 'paused'], () => this.client.cancelPrint());
  }

  /**
   * The bed was cleared: `SDCARD_RESET_FILE` makes Klipper forget the finished file, so it reads `standby`
   * (idle) again. Refused while a print runs or Klipper is in error (that needs a look at the printer).
   */
  async clear(): Promise<void> {
    await this.control('clear', ['standby', 'complete', 'cancelled'], () => this.client.resetFile());
  }

  /** Klipper's own command, with the heater names Klipper gives them (`extruder`, `heater_bed`). */
  async setTemperatures(targets: HeaterTargets): Promise<void> {
    const lines = [
      ...(targets.tool !== undefined
        ? [`SET_HEATER_TEMPERATURE HEATER=extruder TARGET=${targets.tool}`]
        : []),
      ...(targets.bed !== undefined
        ? [`SET_HEATER_TEMPERATURE HEATER=heater_bed TARGET=${targets.bed}`]
        : []),
    ];
    await this.control('set temperatures of', ['standby', 'complete', 'cancelled', 'error'], () =>
      this.client.runGcode(lines.join('\n')),
    );
  }

  onStatusChange(listener: () => void): () => void {
    return this.feed.onUpdate(() => listener());
  }

  async close(): Promise<void> {
    this.settleActive({
      status: 'failed',
      message: 'machine-api stopped while the print was running; its outcome was not observed',
    });
    await this.feed.close();
    await this.client.close();
  }

  /** Facts for `extra.ExtraKindA`: where the printer is, what runs it, what it is doing. Never the API key. */
  private extraOf(snapshot: FeedSnapshot): Record<string, unknown> {
    const stats = printStatsOf(snapshot.objects);
    return {
      endpoint: this.client.endpoint,
      variant: this.settings.variant,
      reachable: snapshot.reachable,
      connection: snapshot.transport,
      last_error: snapshot.lastError,
      klippy_state: snapshot.reachable ? snapshot.klippyState : null,
      klippy_state_message: snapshot.reachable ? snapshot.klippyMessage || null : null,
      klipper_version: snapshot.printer?.software_version ?? null,
      moonraker_version: snapshot.server?.moonraker_version ?? null,
      api_version: snapshot.server?.api_version_string ?? null,
      hostname: snapshot.printer?.hostname ?? null,
      print_state: stats?.state ?? null,
      print_filename: stats?.filename || null,
      print_message: stats?.message || null,
    };
  }

  /** Asks Moonraker now (not the cache): only an idle printer takes a job. */
  private async ensureReady(): Promise<void> {
    let snapshot: FeedSnapshot;
    try {
      snapshot = await this.feed.refresh();
    } catch (error) {
      throw asMachineError(error, `cannot reach Moonraker at ${this.client.endpoint}`);
    }
    const stats = printStatsOf(snapshot.objects);
    const state = machineStateOf(snapshot.klippyState, snapshot.klippyMessage, stats);
    if (state.state === 'idle') return;
    if (state.state === 'offline') {
      throw new MachineError(
        'MachineOffline',
        `Klipper is not connected to Moonraker at ${this.client.endpoint}`,
      );
    }
    const detail =
      state.state === 'failed' && state.message
        ? `${state.state}: ${state.message}`
        : `Klipper ${snapshot.klippyState}, print ${stats?.state ?? 'unknown'}`;
    throw new MachineError('MachineBusy', `machine ${this.id} is not ready for a new job (${detail})`);
  }

  private async upload(request: PrintRequest, name: string) {
    try {
      return await this.client.uploadGcode(request.filePath, name, request.signal);
    } catch (error) {
      if (request.signal.aborted) throw request.signal.reason;
      throw asMachineError(error, `Moonraker refused the upload of ${name}`);
    }
  }

  private async removeQuietly(path: string): Promise<void> {
    await this.client.deleteGcode(path).catch((error: Error) => {
      this.logger.warn({ file: path, err: error.message }, 'could not remove the uploaded file');
    });
  }

  private follow(filename: string, startedAt: number): Promise<PrintOutcome> {
    return new Promise((resolve) => {
      const follower = new PrintFollower({
        filename,
        endpoint: this.client.endpoint,
        lostGraceMs: this.settings.lostPrintGraceMs,
        startGraceMs: Math.max(this.settings.timeoutMs, 2 * this.settings.pollIntervalMs),
        startedAt,
      });
      const job: ActiveJob = {
        filename,
        follower,
        settle: resolve,
        recheck: setInterval(() => this.observe(job, this.feed.snapshot()), this.settings.pollIntervalMs),
        unsubscribe: this.feed.onUpdate((snapshot) => this.observe(job, snapshot)),
      };
      this.active = job;
      this.observe(job, this.feed.snapshot());
    });
  }

  private observe(job: ActiveJob, snapshot: FeedSnapshot): void {
    if (this.active !== job) return;
    const outcome = job.follower.observe(snapshot, Date.now());
    if (outcome) this.settleActive(outcome);
  }

  private settleActive(outcome: PrintOutcome): void {
    const job = this.active;
    if (!job) return;
    this.active = null;
    this.busy = false;
    job.unsubscribe();
    clearInterval(job.recheck);
    this.logger.info({ file: job.filename, outcome }, 'print finished');
    job.settle(outcome);
  }

  private async control(
    action: 'pause' | 'resume' | 'cancel' | 'clear' | 'set temperatures of',
    allowed: string[],
    send: () => Promise<void>,
  ): Promise<void> {
    let snapshot: FeedSnapshot;
    try {
      snapshot = await this.feed.refresh();
    } catch (error) {
      throw asMachineError(error, `cannot reach Moonraker at ${this.client.endpoint}`);
    }
    const printState = printStatsOf(snapshot.objects)?.state ?? 'unknown';
    if (snapshot.klippyState !== 'ready' || !allowed.includes(printState)) {
      throw new MachineError(
        'MachineRejected',
        `cannot ${action} machine ${this.id}: Klipper ${snapshot.klippyState}, print ${printState}`,
      );
    }
    try {
      await send();
    } catch (error) {
      throw asMachineError(error, `Moonraker refused to ${action} the print`);
    }
    // So that a status read right after the command already shows its effect.
    await this.feed.refresh().catch(() => undefined);
  }
}

/** Klipper print states that say this file is printing or how it ended. */
const FOLLOWABLE = ['printing', 'paused', 'complete', 'cancelled', 'error'];

/** Moonraker's answer becomes the message the job shows; an unreachable Moonraker means offline. */
function asMachineError(error: unknown, context: string): Error {
  if (error instanceof MachineError) return error;
  if (error instanceof MoonrakerUnreachable)
    return new MachineError('MachineOffline', `${context}: ${error.message}`);
  if (error instanceof MoonrakerRequestError) {
    const status = error.status ? ` (HTTP ${error.status})` : '';
    return new MachineError('MachineRejected', `${context}: ${error.message}${status}`);
  }
  return error instanceof Error ? error : new Error(String(error));
}

/** Waits for `promise`, at most `ms`. */
async function settledWithin(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
