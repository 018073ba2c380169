/**
 * The MQTT bridge (`[mqtt]`, docs/machine-api/mqtt.md): publishes every machine's state, job, progress and
 * temperatures as one retained JSON message per machine, Home Assistant's discovery messages
 * (discovery.ts), and the service's availability (`online`, and `offline` as its last will). With
 * `commands = true` it also takes pause / resume / stop / clear on `<prefix>/<machine>/command`, through
 * the same machine controls as the HTTP routes, and answers on `…/command/result`.
 *
 * It never holds up the API: publishing is fire-and-forget, nothing is queued while the broker is away
 * (everything is published afresh on every connect), and a broker that is down is retried in the
 * background.
 */

import { readFileSync } from 'node:fs';
import type { MqttClient } from 'mqtt';
import type { Logger } from 'pino';
import type { MqttSettings } from '../config/mqtt-keys.js';
import { ServiceError } from '../errors.js';
import type { Job } from '../jobs/job.js';
import type { MachineObserver, ObservedMachine } from '../machines/observer.js';
import type { MachineRegistry } from '../machines/registry.js';
import {
  CONTROL_ACTIONS,
  type ControlAction,
  discoveryMessages,
  machineTopics,
  serviceStatusTopic,
} from './discovery.js';

/** What the bridge reads and drives; the service wires it to the observer, the job runner and the controls. */
export interface BridgeOptions {
  settings: MqttSettings;
  machines: MachineRegistry;
  observer: MachineObserver;
  /** Calls `listener` with every job change; returns the unsubscribe function. */
  onJobChange(listener: (job: Job) => void): () => void;
  /** The same controls as `POST /machines/{id}/pause|resume|stop|clear`. */
  control(machineId: string, action: ControlAction): Promise<void>;
  version: string;
  logger: Logger;
}

/** Longest command payload read; commands are single words. */
const MAX_COMMAND_BYTES = 64;
const ACTIVE_JOB = new Set(['slicing', 'uploading', 'printing']);

export class MqttBridge {
  private client: MqttClient | null = null;
  private readonly stops: (() => void)[] = [];
  /** The job holding each machine: its name for the `job` sensor. */
  private readonly jobs = new Map<string, { id: string; name: string; status: string }>();
  private readonly settings: MqttSettings;

  constructor(private readonly options: BridgeOptions) {
    this.settings = options.settings;
  }

  /** Connects in the background (the library retries); resolves at once. */
  async start(): Promise<void> {
    const { settings } = this;
    const mqtt = (await import('mqtt')).default;
    const status = serviceStatusTopic(settings.topicPrefix);
    const client = mqtt.connect(settings.url, {
      ...(settings.username !== null ? { username: settings.username } : {}),
      ...(settings.password !== null ? { password: settings.password } : {}),
      ...(settings.caFile !== null ? { ca: readFileSync(settings.caFile) } : {}),
      clientId: `machine-api-${Math.random().toString(16).slice(2, 10)}`,
      will: { topic: status, payload: Buffer.from('offline'), retain: true, qos: 1 },
      reconnectPeriod: 5000,
      connectTimeout: 10_000,
      // Nothing piles up while the broker is away: every connect publishes the whole picture again.
      queueQoSZero: false,
      resubscribe: true,
    });
    this.client = client;
    client.on('connect', () => this.onConnect(client));
    client.on('message', (topic, payload) => this.onMessage(topic, payload));
    client.on('error', (error) => this.options.logger.warn({ reason: error.message }, 'MQTT broker error'));
    this.stops.push(
      this.options.observer.onChange((change) => this.publishMachine(change.machine)),
      this.options.onJobChange((job) => this.onJob(job)),
    );
  }

  /** Says `offline` (the last will is for crashes), then disconnects. */
  async close(): Promise<void> {
    for (const stop of this.stops.splice(0)) stop();
    const client = this.client;
    this.client = null;
    if (!client) return;
    if (client.connected) {
      await client
        .publishAsync(serviceStatusTopic(this.settings.topicPrefix), 'offline', { retain: true, qos: 1 })
        .catch(() => undefined);
    }
    await client.endAsync(!client.connected).catch(() => undefined);
  }

  private onConnect(client: MqttClient): void {
    const { settings } = this;
    this.options.logger.info({ url: settings.url }, 'connected to the MQTT broker');
    const subscriptions = [`${settings.discoveryPrefix}/status`];
    if (settings.commands) subscriptions.push(`${settings.topicPrefix}/+/command`);
    client.subscribe(subscriptions, { qos: 1 }, (error) => {
      if (error) this.options.logger.warn({ reason: error.message }, 'MQTT subscription failed');
    });
    this.publishDiscovery();
    for (const machine of this.options.observer.all()) this.publishMachine(machine);
    this.publish(serviceStatusTopic(settings.topicPrefix), 'online', 1);
  }

  private publishDiscovery(): void {
    if (!this.settings.discovery) return;
    for (const entry of this.options.machines.machines) {
      const identity = entry.machine.identity();
      for (const message of discoveryMessages(
        this.settings,
        { id: entry.id, makeModel: identity.makeModel },
        this.options.version,
      )) {
        this.publish(message.topic, message.payload, 1);
      }
    }
  }

  private onJob(job: Job): void {
    const machineId = job.machineId;
    if (machineId === null) return;
    const known = this.jobs.get(machineId);
    if (ACTIVE_JOB.has(job.status))
      this.jobs.set(machineId, { id: job.id, name: job.jobName, status: job.status });
    else if (known?.id === job.id) this.jobs.delete(machineId);
    else return;
    const machine = this.options.observer.current(machineId);
    if (machine) this.publishMachine(machine);
  }

  private publishMachine(machine: ObservedMachine): void {
    const { status } = machine;
    const topics = machineTopics(this.settings.topicPrefix, machine.id);
    const offline = status.state.state === 'offline';
    this.publish(topics.availability, offline ? 'offline' : 'online', 1);
    const job = this.jobs.get(machine.id) ?? null;
    const extruder = status.temperatures.extruder;
    const bed = status.temperatures.bed;
    const capabilities = status.capabilities ?? { control: true, reason: null };
    const state = {
      state: status.state.state,
      message: status.state.state === 'failed' ? status.state.message : null,
      progress: status.progress,
      ready: machine.ready,
      job: job?.name ?? null,
      job_id: job?.id ?? null,
      job_status: job?.status ?? null,
      nozzle_temperature: extruder?.current ?? null,
      nozzle_target: extruder?.target ?? null,
      bed_temperature: bed?.current ?? null,
      bed_target: bed?.target ?? null,
      temperatures: status.temperatures,
      control: capabilities.control,
      control_reason: capabilities.reason,
    };
    this.publish(topics.state, JSON.stringify(state), 0);
  }

  private onMessage(topic: string, payload: Buffer): void {
    const { settings } = this;
    if (topic === `${settings.discoveryPrefix}/status`) {
      // Home Assistant came back: it asks for discovery (and the states) again.
      if (payload.toString('utf8') === 'online') {
        this.publishDiscovery();
        for (const machine of this.options.observer.all()) this.publishMachine(machine);
      }
      return;
    }
    if (!settings.commands) return;
    const match = /^([^/]+)\/([^/]+)\/command$/.exec(topic);
    if (!match || match[1] !== settings.topicPrefix) return;
    const machineId = match[2] as string;
    const entry = this.options.machines.get(machineId);
    if (!entry) return;
    const action = payload.length <= MAX_COMMAND_BYTES ? payload.toString('utf8').trim() : '';
    const result = machineTopics(settings.topicPrefix, entry.id).commandResult;
    if (!(CONTROL_ACTIONS as readonly string[]).includes(action)) {
      const message = `unknown command; expected one of ${CONTROL_ACTIONS.join(', ')}`;
      this.publish(result, JSON.stringify({ action: null, ok: false, error_code: 'BadRequest', message }), 0);
      return;
    }
    this.options.control(entry.id, action as ControlAction).then(
      () => this.publish(result, JSON.stringify({ action, ok: true, error_code: null, message: null }), 0),
      (error: unknown) => {
        const known = error instanceof ServiceError;
        if (!known)
          this.options.logger.error({ err: error, machine: entry.id, action }, 'MQTT command failed');
        const body = {
          action,
          ok: false,
          error_code: known ? error.errorCode : 'InternalError',
          message: known ? error.message : 'the command failed; see the service log',
        };
        this.publish(result, JSON.stringify(body), 0);
      },
    );
  }

  private publish(topic: string, payload: string, qos: 0 | 1): void {
    const client = this.client;
    if (!client?.connected) return;
    client.publish(topic, payload, { qos, retain: !topic.endsWith('/command/result') }, (error) => {
      if (error) this.options.logger.debug({ topic, reason: error.message }, 'MQTT publish failed');
    });
  }
}
