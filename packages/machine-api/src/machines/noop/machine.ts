/**
 * A simulated machine: reports a configurable identity and state, and "prints" by advancing its progress
 * over a configurable duration, with pause/resume/stop, so the whole job lifecycle runs without hardware.
 */

import { stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type ActivePrint,
  type HeaterTargets,
  type Machine,
  MachineError,
  type MachineIdentity,
  type MachineState,
  type MachineStatus,
  type PrintFileFormat,
  type PrintOutcome,
  type PrintRequest,
  type Temperature,
} from '../machine.js';

export interface NoopSettings {
  identity: MachineIdentity;
  /** State reported while no simulated print runs; only `idle` accepts prints. */
  state: MachineState;
  /** Progress reported while no simulated print runs. */
  progress: number | null;
  /** How long a simulated print takes. */
  printMilliseconds: number;
  printFormat: PrintFileFormat;
  /** Simulated latency of a status request (a slow or hung network device). */
  statusDelayMs: number;
  /** A simulated AMS: filament slots a spool can be assigned to one by one. */
  filamentSlots?: number;
}

interface RunningPrint {
  jobId: string;
  paused: boolean;
  /** Milliseconds printed before the current run segment. */
  elapsedBefore: number;
  /** When the current run segment started (meaningless while paused). */
  segmentStart: number;
  timer: NodeJS.Timeout | null;
  settle(outcome: PrintOutcome): void;
}

const ROOM = 25;

export class NoopMachine implements Machine {
  readonly printFormat: PrintFileFormat;
  /** Like the anchor's Noop: without a slicer it "prints" any design as it is. */
  readonly takesDesigns = true;
  readonly filamentSlots?: number;
  private current: RunningPrint | null = null;
  /** Set points while no simulated print runs; the simulation heats at once. */
  private readonly targets = { tool: 0, bed: 0 };
  private readonly listeners = new Set<() => void>();

  constructor(
    readonly id: string,
    private readonly settings: NoopSettings,
  ) {
    this.printFormat = settings.printFormat;
    if (settings.filamentSlots !== undefined) this.filamentSlots = settings.filamentSlots;
  }

  identity(): MachineIdentity {
    return this.settings.identity;
  }

  async status(): Promise<MachineStatus> {
    if (this.settings.statusDelayMs > 0) await sleep(this.settings.statusDelayMs, undefined, { ref: false });
    const print = this.current;
    if (!print) {
      return {
        state: this.settings.state,
        progress: this.settings.progress,
        temperatures: { extruder: heater(this.targets.tool), bed: heater(this.targets.bed) },
        extra: null,
      };
    }
    const progress = Math.min(100, (this.elapsed(print) / this.settings.printMilliseconds) * 100);
    return {
      state: { state: print.paused ? 'paused' : 'running' },
      progress: Math.round(progress * 10) / 10,
      temperatures: { extruder: { current: 210, target: 210 }, bed: { current: 60, target: 60 } },
      extra: null,
    };
  }

  async print(request: PrintRequest): Promise<ActivePrint> {
    if (this.current || this.settings.state.state !== 'idle') {
      const state = this.current ? 'running' : this.settings.state.state;
      throw new MachineError('MachineBusy', `machine "${this.id}" is ${state}, not idle`);
    }
    const file = await stat(request.filePath).catch(() => null);
    if (!file?.isFile())
      throw new MachineError('MachineRejected', `print file ${request.filePath} does not exist`);
    if (request.signal.aborted)
      throw new MachineError('MachineRejected', 'the job was cancelled before it started');
    let settle!: (outcome: PrintOutcome) => void;
    const finished = new Promise<PrintOutcome>((resolve) => {
      settle = resolve;
    });
    const print: RunningPrint = {
      jobId: request.jobId,
      paused: false,
      elapsedBefore: 0,
      segmentStart: Date.now(),
      timer: null,
      settle: (outcome) => {
        if (print.timer) clearTimeout(print.timer);
        if (this.current === print) this.current = null;
        settle(outcome);
        this.changed();
      },
    };
    this.current = print;
    this.schedule(print);
    this.changed();
    return { finished };
  }

  async pause(): Promise<void> {
    const print = this.requireRunning('pause');
    if (print.paused) return;
    print.elapsedBefore = this.elapsed(print);
    print.paused = true;
    if (print.timer) clearTimeout(print.timer);
    print.timer = null;
    this.changed();
  }

  async resume(): Promise<void> {
    const print = this.requireRunning('resume');
    if (!print.paused) return;
    print.paused = false;
    print.segmentStart = Date.now();
    this.schedule(print);
    this.changed();
  }

  async stop(): Promise<void> {
    this.requireRunning('stop').settle({ status: 'cancelled' });
  }

  async setTemperatures(targets: HeaterTargets): Promise<void> {
    if (this.current) throw new MachineError('MachineBusy', `machine "${this.id}" is printing`);
    if (targets.tool !== undefined) this.targets.tool = targets.tool;
    if (targets.bed !== undefined) this.targets.bed = targets.bed;
    this.changed();
  }

  onStatusChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.current?.settle({ status: 'failed', message: 'the simulated machine was shut down' });
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }

  private elapsed(print: RunningPrint): number {
    return print.paused ? print.elapsedBefore : print.elapsedBefore + (Date.now() - print.segmentStart);
  }

  private schedule(print: RunningPrint): void {
    const remaining = Math.max(0, this.settings.printMilliseconds - print.elapsedBefore);
    print.timer = setTimeout(() => print.settle({ status: 'completed' }), remaining);
  }

  private requireRunning(action: string): RunningPrint {
    if (!this.current)
      throw new MachineError('MachineRejected', `cannot ${action}: machine "${this.id}" is not printing`);
    return this.current;
  }
}

/** A simulated heater: at its set point at once, at room temperature when off. */
function heater(target: number): Temperature {
  return { current: target > 0 ? target : ROOM, target };
}
