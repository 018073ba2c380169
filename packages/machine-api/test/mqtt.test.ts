/**
 * MQTT with Home Assistant discovery against a real broker: Debian's Mosquitto, started here on a free port
 * with a password file. A subscriber checks every discovery message against Home Assistant's documented
 * MQTT discovery schema (topic shape, device, unique_id, state_topic, availability, origin, per-component
 * keys), reads the retained machine states, drives a print through the command topics (pause, resume,
 * stop, clear) and sees hostile commands refused. A second service with `commands = false` ignores them.
 */

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson, type MachineApiUnderTest, postPrint, startMachineApi, waitFor } from './harness.js';

const MOSQUITTO = '/usr/sbin/mosquitto';
const USER = 'farm';
const PASSWORD = 's3cret-pass';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Mosquitto on a free port, with one user. */
async function startBroker(dir: string): Promise<{ url: string; process: ChildProcess }> {
  if (!existsSync(MOSQUITTO)) throw new Error('mosquitto is missing: apt-get install mosquitto');
  const passwords = join(dir, 'passwords');
  await writeFile(passwords, '');
  const made = spawnSync('mosquitto_passwd', ['-b', passwords, USER, PASSWORD]);
  if (made.status !== 0) throw new Error(`mosquitto_passwd failed: ${made.stderr}`);
  const port = await freePort();
  const conf = join(dir, 'mosquitto.conf');
  await writeFile(
    conf,
    // `user`: started as root, Mosquitto would drop to the `mosquitto` user, who cannot read this directory.
    `user ${userInfo().username}\nlistener ${port} 127.0.0.1\nallow_anonymous false\npassword_file ${passwords}\npersistence false\n`,
  );
  const child = spawn(MOSQUITTO, ['-c', conf], { stdio: 'ignore' });
  const url = `mqtt://127.0.0.1:${port}`;
  await waitFor(
    async () => {
      const probe = await mqtt
        .connectAsync(url, { username: USER, password: PASSWORD, reconnectPeriod: 0 })
        .catch(() => null);
      await probe?.endAsync();
      return probe !== null;
    },
    { what: 'mosquitto to accept connections' },
  );
  return { url, process: child };
}

/** Every message seen, last payload per topic (retained ones included). */
class Subscriber {
  readonly last = new Map<string, string>();
  readonly log: { topic: string; payload: string; retain: boolean }[] = [];
  private constructor(readonly client: MqttClient) {
    client.on('message', (topic, payload, packet) => {
      this.last.set(topic, payload.toString('utf8'));
      this.log.push({ topic, payload: payload.toString('utf8'), retain: packet.retain });
    });
  }
  static async connect(url: string, topics: string[]): Promise<Subscriber> {
    const client = await mqtt.connectAsync(url, { username: USER, password: PASSWORD, reconnectPeriod: 0 });
    const subscriber = new Subscriber(client);
    await client.subscribeAsync(topics, { qos: 1 });
    return subscriber;
  }
  json<T = Record<string, unknown>>(topic: string): T | undefined {
    const payload = this.last.get(topic);
    return payload ? (JSON.parse(payload) as T) : undefined;
  }
}

// Home Assistant's MQTT discovery schema, from https://www.home-assistant.io/integrations/mqtt/ (discovery
// messages, availability, device and origin) and the sensor, binary_sensor and button pages: the keys they
// document, their types, and the required ones. A key outside it would be a typo Home Assistant rejects.
const availability = {
  type: 'array',
  minItems: 1,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['topic'],
    properties: {
      topic: { type: 'string', minLength: 1 },
      payload_available: { type: 'string' },
      payload_not_available: { type: 'string' },
      value_template: { type: 'string' },
    },
  },
};
const device = {
  type: 'object',
  additionalProperties: false,
  anyOf: [{ required: ['identifiers'] }, { required: ['connections'] }],
  properties: {
    identifiers: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
    connections: { type: 'array' },
    name: { type: 'string' },
    manufacturer: { type: 'string' },
    model: { type: 'string' },
    model_id: { type: 'string' },
    serial_number: { type: 'string' },
    hw_version: { type: 'string' },
    sw_version: { type: 'string' },
    suggested_area: { type: 'string' },
    configuration_url: { type: 'string' },
    via_device: { type: 'string' },
  },
};
const common = {
  name: { type: ['string', 'null'] },
  unique_id: { type: 'string', minLength: 1 },
  object_id: { type: 'string' },
  icon: { type: 'string', pattern: '^mdi:' },
  device,
  origin: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: { name: { type: 'string' }, sw_version: { type: 'string' }, support_url: { type: 'string' } },
  },
  availability,
  availability_mode: { enum: ['all', 'any', 'latest'] },
  enabled_by_default: { type: 'boolean' },
  entity_category: { enum: ['config', 'diagnostic'] },
  qos: { enum: [0, 1, 2] },
};
const DISCOVERY_SCHEMAS = {
  sensor: {
    type: 'object',
    additionalProperties: false,
    required: ['unique_id', 'device', 'state_topic', 'availability'],
    properties: {
      ...common,
      state_topic: { type: 'string', minLength: 1 },
      value_template: { type: 'string' },
      unit_of_measurement: { type: 'string' },
      device_class: { enum: ['temperature', 'duration', 'timestamp', 'enum'] },
      state_class: { enum: ['measurement', 'total', 'total_increasing'] },
      expire_after: { type: 'integer' },
      force_update: { type: 'boolean' },
    },
  },
  binary_sensor: {
    type: 'object',
    additionalProperties: false,
    required: ['unique_id', 'device', 'state_topic', 'availability'],
    properties: {
      ...common,
      state_topic: { type: 'string', minLength: 1 },
      value_template: { type: 'string' },
      payload_on: { type: 'string' },
      payload_off: { type: 'string' },
      device_class: { enum: ['running', 'problem', 'power'] },
    },
  },
  button: {
    type: 'object',
    additionalProperties: false,
    required: ['unique_id', 'device', 'command_topic', 'availability'],
    properties: {
      ...common,
      command_topic: { type: 'string', minLength: 1 },
      payload_press: { type: 'string' },
      retain: { type: 'boolean' },
      device_class: { enum: ['identify', 'restart', 'update'] },
    },
  },
} as const;
const DISCOVERY_TOPIC =
  /^homeassistant\/(sensor|binary_sensor|button)\/([a-zA-Z0-9_-]+)\/([a-zA-Z0-9_-]+)\/config$/;

const GCODE = 'G28\nG1 X10 Y10 Z0.2 F3000\n';

describe('MQTT with Home Assistant discovery', () => {
  let dir: string;
  let broker: { url: string; process: ChildProcess };
  let api: MachineApiUnderTest;
  let sub: Subscriber;
  const ajv = new Ajv({ allErrors: true, strict: false });
  const validators = Object.fromEntries(
    Object.entries(DISCOVERY_SCHEMAS).map(([component, schema]) => [component, ajv.compile(schema)]),
  );

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'machine-api-mqtt-'));
    broker = await startBroker(dir);
    sub = await Subscriber.connect(broker.url, ['homeassistant/#', 'machine-api/#']);
    api = await startMachineApi(`
[mqtt]
url = "${broker.url}"
username = "${USER}"
password = "${PASSWORD}"
commands = true

[machines.sim]
type = "Noop"
manufacturer = "Prusa Research"
model = "MK4 (simulated)"
serial = "SIM-1"
print_seconds = 600

[machines."bench.2"]
type = "Noop"
state.state = "offline"
`);
  });
  afterAll(async () => {
    await api?.close();
    await sub?.client.endAsync();
    broker?.process.kill();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("publishes discovery messages that follow Home Assistant's schema, one device per machine", async () => {
    await waitFor(() => [...sub.last.keys()].filter((t) => DISCOVERY_TOPIC.test(t)).length === 24, {
      what: '12 discovery messages per machine',
    });
    // A subscriber arriving later gets them all as retained messages, as Home Assistant does on start.
    const late = await Subscriber.connect(broker.url, ['homeassistant/#']);
    await waitFor(
      () => late.log.filter((m) => m.retain && DISCOVERY_TOPIC.test(m.topic) && m.payload).length === 24,
      {
        what: 'the retained discovery messages',
      },
    );
    await late.client.endAsync();
    const devices = new Map<string, unknown>();
    for (const [topic, payload] of sub.last) {
      const match = DISCOVERY_TOPIC.exec(topic);
      if (!match) continue;
      const [, component, node, object] = match as unknown as [
        string,
        keyof typeof DISCOVERY_SCHEMAS,
        string,
        string,
      ];
      const config = JSON.parse(payload) as Record<string, unknown>;
      const validate = validators[component]!;
      expect(validate(config), `${topic}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      expect(config.unique_id).toBe(`${node}_${object}`);
      expect(late.last.get(topic), `${topic} retained`).toBe(payload);
      devices.set(node, config.device);
    }
    expect(devices).toEqual(
      new Map([
        [
          'machine-api_bench_2',
          {
            identifiers: ['machine-api_bench_2'],
            name: 'bench.2',
            manufacturer: 'Zoo Corporation',
            model: 'Null Machine',
            serial_number: 'Cheerios',
          },
        ],
        [
          'machine-api_sim',
          {
            identifiers: ['machine-api_sim'],
            name: 'sim',
            manufacturer: 'Prusa Research',
            model: 'MK4 (simulated)',
            serial_number: 'SIM-1',
          },
        ],
      ]),
    );
    expect(sub.json('homeassistant/sensor/machine-api_sim/nozzle_temperature/config')).toEqual({
      name: 'Nozzle temperature',
      value_template: '{{ value_json.nozzle_temperature }}',
      device_class: 'temperature',
      unit_of_measurement: '°C',
      state_class: 'measurement',
      unique_id: 'machine-api_sim_nozzle_temperature',
      state_topic: 'machine-api/sim/state',
      device: expect.any(Object),
      origin: { name: 'machine-api', sw_version: '0.1.0' },
      availability: [
        { topic: 'machine-api/status', payload_available: 'online', payload_not_available: 'offline' },
        {
          topic: 'machine-api/sim/availability',
          payload_available: 'online',
          payload_not_available: 'offline',
        },
      ],
      availability_mode: 'all',
    });
    expect(sub.json('homeassistant/button/machine-api_sim/pause/config')).toMatchObject({
      command_topic: 'machine-api/sim/command',
      payload_press: 'pause',
    });
  });

  it("publishes availability and each machine's state, job, progress and temperatures, retained", async () => {
    await waitFor(() => sub.last.get('machine-api/status') === 'online');
    await waitFor(() => sub.last.get('machine-api/bench.2/availability') === 'offline');
    expect(sub.last.get('machine-api/sim/availability')).toBe('online');
    expect(sub.json('machine-api/sim/state')).toEqual({
      state: 'idle',
      message: null,
      progress: null,
      ready: true,
      job: null,
      job_id: null,
      job_status: null,
      nozzle_temperature: 25,
      nozzle_target: 0,
      bed_temperature: 25,
      bed_target: 0,
      temperatures: { extruder: { current: 25, target: 0 }, bed: { current: 25, target: 0 } },
      control: true,
      control_reason: null,
    });
  });

  const command = async (machine: string, payload: string) => {
    const before = sub.log.length;
    await sub.client.publishAsync(`machine-api/${machine}/command`, payload, { qos: 1 });
    const result = await waitFor(() =>
      sub.log.slice(before).find((m) => m.topic === `machine-api/${machine}/command/result`),
    );
    return JSON.parse(result.payload) as Record<string, unknown>;
  };

  it("drives a print through the command topics with the HTTP controls' rules", async () => {
    const print = await postPrint(api.baseUrl, {
      machineId: 'sim',
      jobName: 'benchy',
      file: GCODE,
      fileName: 'benchy.gcode',
    });
    expect(print.status).toBe(200);
    await waitFor(() => sub.json<{ state: string; job: string }>('machine-api/sim/state')?.job === 'benchy');
    expect(sub.json('machine-api/sim/state')).toMatchObject({
      state: 'running',
      job: 'benchy',
      job_status: 'printing',
    });

    expect(await command('sim', 'pause')).toEqual({
      action: 'pause',
      ok: true,
      error_code: null,
      message: null,
    });
    await waitFor(() => sub.json<{ state: string }>('machine-api/sim/state')?.state === 'paused');
    expect(await command('sim', 'resume')).toMatchObject({ action: 'resume', ok: true });
    // Clearing a bed under a running print is refused as over HTTP.
    expect(await command('sim', 'clear')).toMatchObject({
      action: 'clear',
      ok: false,
      error_code: 'MachineBusy',
    });
    expect(await command('sim', 'stop')).toMatchObject({ action: 'stop', ok: true });
    await waitFor(
      () => sub.json<{ job: string | null; ready: boolean }>('machine-api/sim/state')?.job === null,
    );
    expect(sub.json('machine-api/sim/state')).toMatchObject({ state: 'idle', ready: false });
    expect(await command('sim', 'clear')).toMatchObject({ action: 'clear', ok: true });
    await waitFor(() => sub.json<{ ready: boolean }>('machine-api/sim/state')?.ready === true);
  });

  it('refuses hostile commands and changes nothing', async () => {
    for (const payload of ['reboot', '', 'pause; stop', 'x'.repeat(10_000), '{"action":"stop"}']) {
      expect(await command('sim', payload)).toEqual({
        action: null,
        ok: false,
        error_code: 'BadRequest',
        message: 'unknown command; expected one of pause, resume, stop, clear',
      });
    }
    expect(await command('bench.2', 'pause')).toMatchObject({ ok: false, error_code: 'MachineRejected' });
    const machine = await getJson<{ state: { state: string }; ready: boolean }>(api.baseUrl, '/machines/sim');
    expect(machine).toMatchObject({ state: { state: 'idle' }, ready: true });
  });

  it('ignores commands unless commands = true, and says offline when it stops', async () => {
    const quiet = await startMachineApi(`
[mqtt]
url = "${broker.url}"
username = "${USER}"
password = "${PASSWORD}"
topic_prefix = "quiet"
discovery_prefix = "homeassistant"

[machines.q]
type = "Noop"
print_seconds = 600
`);
    try {
      await sub.client.subscribeAsync('quiet/#', { qos: 1 });
      await waitFor(() => sub.last.get('quiet/status') === 'online');
      // The buttons are not announced.
      expect(sub.last.get('homeassistant/button/quiet_q/stop/config') ?? '').toBe('');
      const print = await postPrint(quiet.baseUrl, {
        machineId: 'q',
        jobName: 'long',
        file: GCODE,
        fileName: 'long.gcode',
      });
      expect(print.status).toBe(200);
      await sub.client.publishAsync('quiet/q/command', 'stop', { qos: 1 });
      // Home Assistant's birth message makes the service publish again; it is delivered after the command
      // (one publisher, one subscriber), so a service that took commands would have stopped by then.
      const before = sub.log.length;
      await sub.client.publishAsync('homeassistant/status', 'online', { qos: 1 });
      await waitFor(() => sub.log.slice(before).some((m) => m.topic === 'quiet/q/state'));
      const machine = await getJson<{ state: { state: string } }>(quiet.baseUrl, '/machines/q');
      expect(machine.state.state).toBe('running');
    } finally {
      await quiet.close();
    }
    await waitFor(() => sub.last.get('quiet/status') === 'offline', { what: 'quiet offline' });
  });
});
