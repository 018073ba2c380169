/**
 * Prometheus metrics (prom-client), one registry per service instance: per-machine state, progress and
 * temperatures (read live at scrape time), job outcomes, and the HTTP request duration histogram.
 */

import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { MachineRegistry } from './machines/registry.js';

const STATES = ['unknown', 'idle', 'running', 'paused', 'complete', 'offline', 'failed'] as const;

export type JobOutcome = 'completed' | 'failed' | 'cancelled';

export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly httpDuration: Histogram<'method' | 'route' | 'status_code'>;
  private readonly jobs: Counter<'outcome'>;
  private readonly machineState: Gauge<'id' | 'state'>;
  private readonly machineProgress: Gauge<'id'>;
  private readonly temperature: Gauge<'id' | 'sensor'>;
  private readonly targetTemperature: Gauge<'id' | 'sensor'>;
  private readonly queueDepth: Gauge;
  private readonly queueWait: Histogram;
  private readonly dispatches: Counter<'machine'>;

  constructor(
    private readonly machines: MachineRegistry,
    private readonly statusTimeoutMs: number,
  ) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'machine_api_' });
    this.httpDuration = new Histogram({
      name: 'machine_api_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status_code'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60],
      registers,
    });
    this.jobs = new Counter({
      name: 'machine_api_jobs_finished_total',
      help: 'Print jobs that reached a final status, by outcome.',
      labelNames: ['outcome'],
      registers,
    });
    for (const outcome of ['completed', 'failed', 'cancelled'] as const) this.jobs.inc({ outcome }, 0);
    this.machineState = new Gauge({
      name: 'machine_api_machine_state',
      help: '1 for the state each machine is in, 0 for the others.',
      labelNames: ['id', 'state'],
      registers,
    });
    this.machineProgress = new Gauge({
      name: 'machine_api_machine_progress_percent',
      help: 'Progress of the print each machine is running, in percent (absent when not printing).',
      labelNames: ['id'],
      registers,
    });
    this.temperature = new Gauge({
      name: 'machine_api_machine_temperature_celsius',
      help: 'Current temperature of each sensor of each machine.',
      labelNames: ['id', 'sensor'],
      registers,
    });
    this.targetTemperature = new Gauge({
      name: 'machine_api_machine_target_temperature_celsius',
      help: 'Target temperature of each heater of each machine.',
      labelNames: ['id', 'sensor'],
      registers,
    });
    this.queueDepth = new Gauge({
      name: 'machine_api_queue_depth',
      help: 'Jobs waiting in the queue for a machine.',
      registers,
    });
    this.queueWait = new Histogram({
      name: 'machine_api_queue_wait_seconds',
      help: 'Time a job waited in the queue before it was dispatched to a machine.',
      buckets: [1, 10, 60, 300, 900, 1800, 3600, 7200, 14400, 43200, 86400],
      registers,
    });
    this.dispatches = new Counter({
      name: 'machine_api_queue_dispatches_total',
      help: 'Jobs the queue dispatched, by machine.',
      labelNames: ['machine'],
      registers,
    });
    for (const entry of machines.machines) this.dispatches.inc({ machine: entry.id }, 0);
  }

  /** The number of jobs waiting in the queue. */
  setQueueDepth(depth: number): void {
    this.queueDepth.set(depth);
  }

  /** Counts a dispatch and how long the job waited. */
  jobDispatched(machineId: string, waitedSeconds: number): void {
    this.dispatches.inc({ machine: machineId });
    this.queueWait.observe(Math.max(0, waitedSeconds));
  }

  /** Records one answered HTTP request. */
  observeRequest(method: string, route: string, statusCode: number, seconds: number): void {
    this.httpDuration.observe({ method, route, status_code: statusCode }, seconds);
  }

  /** Counts a job that reached a final status. */
  jobFinished(outcome: JobOutcome): void {
    this.jobs.inc({ outcome });
  }

  /** Reads every machine's status and renders the Prometheus text exposition. */
  async render(): Promise<string> {
    const entries = this.machines.machines;
    const statuses = await this.machines.statuses(entries, this.statusTimeoutMs);
    this.machineProgress.reset();
    this.temperature.reset();
    this.targetTemperature.reset();
    for (const [index, entry] of entries.entries()) {
      const status = statuses[index];
      if (!status) continue;
      for (const state of STATES) {
        this.machineState.set({ id: entry.id, state }, status.state.state === state ? 1 : 0);
      }
      if (status.progress !== null) this.machineProgress.set({ id: entry.id }, status.progress);
      for (const [sensor, reading] of Object.entries(status.temperatures)) {
        this.temperature.set({ id: entry.id, sensor }, reading.current);
        if (reading.target !== null) this.targetTemperature.set({ id: entry.id, sensor }, reading.target);
      }
    }
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
