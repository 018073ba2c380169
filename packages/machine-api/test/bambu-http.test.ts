/**
 * A Bambu printer through the real service: configured in TOML, discovered over UDP, listed by
 * `GET /machines` with its `ExtraKindB` details. Every response is checked against the served OpenAPI document.
 */

import { afterEach, describe, expect, it } from 'vitest';
import { ContractClient } from './contract.js';
import { type MachineApiUnderTest, startMachineApi, waitFor } from './harness.js';
import { BambuPrinterSim, freeUdpPort } from './sim/bambu.js';

const open: { sims: BambuPrinterSim[]; apis: MachineApiUnderTest[] } = { sims: [], apis: [] };

afterEach(async () => {
  await Promise.all(open.apis.splice(0).map((api) => api.close()));
  await Promise.all(open.sims.splice(0).map((sim) => sim.close()));
});

interface Started {
  sim: BambuPrinterSim;
  api: MachineApiUnderTest;
  client: ContractClient;
  discoveryPort: number;
}

/** A simulated printer and the service configured for it, found by discovery (no host/serial in the config). */
async function startWithDiscovery(): Promise<Started> {
  const sim = await BambuPrinterSim.start({ name: 'Shop floor X1C' });
  open.sims.push(sim);
  const discoveryPort = await freeUdpPort();
  const api = await startMachineApi(`
[machines.x1c]
type = "Bambu"
name = "Shop floor X1C"
access_code = "${sim.accessCode}"
discovery_port = ${discoveryPort}
mqtt_port = ${sim.mqttPort}
ftps_port = ${sim.ftpsPort}
nozzle_diameter = 0.4
[[machines.x1c.filaments]]
material.type = "pla"
`);
  open.apis.push(api);
  return { sim, api, client: await ContractClient.create(api.baseUrl), discoveryPort };
}

describe('Bambu machines over HTTP', () => {
  it('lists a configured printer as offline until it is discovered, then with identity, state and ExtraKindB', async () => {
    const { sim, client, discoveryPort } = await startWithDiscovery();

    const before = await client.request('GET', '/machines/x1c');
    expect(before.status).toBe(200);
    expect(before.body).toEqual({
      id: 'x1c',
      make_model: { manufacturer: 'Bambu Lab', model: null, serial: null },
      machine_type: 'FusedDeposition',
      max_part_volume: null,
      extra: null,
      state: { state: 'offline' },
      progress: null,
      ready: false,
      awaiting_clear_since: null,
      design_types: ['gcode'],
      capabilities: { control: true, reason: null },
      temperatures: {},
      hardware_configuration: {
        type: 'fdm',
        config: {
          nozzle_diameter: 0.4,
          filaments: [{ material: { type: 'pla' } }],
          loaded_filament_idx: null,
        },
      },
      current_job: null,
      camera: null,
    });

    sim.announceTo(discoveryPort);
    const listed = await waitFor(
      async () => {
        const res = await client.request('GET', '/machines');
        const machines = res.body as { id: string; state: { state: string } }[];
        return machines.find((machine) => machine.id === 'x1c' && machine.state.state === 'idle');
      },
      { what: 'the discovered printer listed as idle' },
    );
    expect(listed).toEqual({
      id: 'x1c',
      make_model: { manufacturer: 'Bambu Lab', model: 'X1 Carbon', serial: sim.serial },
      machine_type: 'FusedDeposition',
      max_part_volume: { width: 256, depth: 256, height: 256 },
      extra: {
        ExtraKindB: {
          current_stage: 'nothing',
          gcode_state: 'IDLE',
          nozzle_diameter: '0.4',
          nozzle_type: 'hardened_steel',
          job_name: null,
          layer: null,
          total_layers: null,
          remaining_minutes: null,
          print_error: null,
          filaments: [
            { tray: 0, material: { type: 'pla' }, name: 'PLA Basic', color: 'FF6A13', remaining: 78 },
            { tray: 1, material: { type: 'petg' }, name: 'PETG HF', color: '000000', remaining: 40 },
            {
              tray: 3,
              material: { type: 'pla_support' },
              name: 'Support for PLA',
              color: 'FFFFFF',
              remaining: null,
            },
          ],
          loaded_filament_idx: 0,
          wifi_signal: '-44dBm',
        },
      },
      state: { state: 'idle' },
      progress: null,
      ready: true,
      awaiting_clear_since: null,
      design_types: ['gcode'],
      capabilities: { control: true, reason: null },
      temperatures: {
        bed: { current: 24.5, target: 0 },
        chamber: { current: 26, target: null },
        extruder: { current: 25.1, target: 0 },
      },
      // Once the printer reports, its own nozzle and AMS spools replace the configured ones.
      hardware_configuration: {
        type: 'fdm',
        config: {
          nozzle_diameter: 0.4,
          filaments: [
            { name: 'PLA Basic', material: { type: 'pla' }, color: 'FF6A13' },
            { name: 'PETG HF', material: { type: 'petg' }, color: '000000' },
            { name: 'Support for PLA', material: { type: 'pla_support' }, color: 'FFFFFF' },
          ],
          loaded_filament_idx: 0,
        },
      },
      current_job: null,
      // The X1 Carbon's camera is its RTSPS stream (read through ffmpeg, installed here and in CI).
      camera: {
        available: true,
        kind: 'bambu-rtsps',
        width: null,
        height: null,
        last_frame_at: null,
        reason: null,
        flip_horizontal: false,
        flip_vertical: false,
        rotation: 0,
      },
    });

    // The chamber sensor, which only Bambu printers have, reaches the Prometheus scrape.
    const metrics = await fetch(`${client.baseUrl}/metrics`);
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    expect(text).toContain('machine_api_machine_temperature_celsius{id="x1c",sensor="chamber"} 26');
    expect(text).toContain('machine_api_machine_temperature_celsius{id="x1c",sensor="extruder"} 25.1');
    expect(text).toContain('machine_api_machine_target_temperature_celsius{id="x1c",sensor="bed"} 0');
  });

  it('discovers several printers through one shared discovery port, each by its own name', async () => {
    const x1c = await BambuPrinterSim.start({ name: 'Left X1C' });
    const p1s = await BambuPrinterSim.start({
      name: 'Right P1S',
      serial: '01P00A391800042',
      modelCode: 'C12',
      accessCode: '24681357',
      reportMode: 'delta',
    });
    open.sims.push(x1c, p1s);
    const discoveryPort = await freeUdpPort();
    const machine = (id: string, sim: BambuPrinterSim) => `
[machines.${id}]
type = "Bambu"
name = "${sim.name}"
access_code = "${sim.accessCode}"
discovery_port = ${discoveryPort}
mqtt_port = ${sim.mqttPort}
ftps_port = ${sim.ftpsPort}
`;
    const api = await startMachineApi(machine('left', x1c) + machine('right', p1s));
    open.apis.push(api);
    const client = await ContractClient.create(api.baseUrl);
    x1c.announceTo(discoveryPort);
    p1s.announceTo(discoveryPort);

    const listing = await waitFor(
      async () => {
        const res = await client.request('GET', '/machines');
        const machines = res.body as { id: string; make_model: unknown; state: { state: string } }[];
        return machines.every((entry) => entry.state.state === 'idle') ? machines : undefined;
      },
      { what: 'both printers idle' },
    );
    expect(listing.map((entry) => [entry.id, entry.make_model])).toEqual([
      ['left', { manufacturer: 'Bambu Lab', model: 'X1 Carbon', serial: x1c.serial }],
      ['right', { manufacturer: 'Bambu Lab', model: 'P1S', serial: p1s.serial }],
    ]);
  });

  it('pauses, resumes and stops a print started on the printer itself through the machine controls', async () => {
    const sim = await BambuPrinterSim.start({ printTicks: 100_000 });
    open.sims.push(sim);
    const api = await startMachineApi(sim.machineToml('x1c'));
    open.apis.push(api);
    const client = await ContractClient.create(api.baseUrl);
    const stateOf = (body: unknown) => (body as { state: unknown }).state;
    const stateNow = async () =>
      (stateOf((await client.request('GET', '/machines/x1c')).body) as { state: string }).state;
    await waitFor(async () => (await stateNow()) === 'idle', { what: 'idle printer' });

    const idlePause = await client.request('POST', '/machines/x1c/pause');
    expect(idlePause.status).toBe(409);
    expect(idlePause.body).toMatchObject({
      error_code: 'MachineRejected',
      message: 'cannot pause x1c: it is idle, not running',
    });

    sim.startLocalJob('benchy');
    await waitFor(async () => (await stateNow()) === 'running', { what: 'the local job running' });
    const paused = await client.request('POST', '/machines/x1c/pause');
    expect(paused.status).toBe(200);
    expect(stateOf(paused.body)).toEqual({ state: 'paused' });
    expect((paused.body as { extra: { ExtraKindB: { job_name: string } } }).extra.ExtraKindB.job_name).toBe(
      'benchy',
    );

    const resumed = await client.request('POST', '/machines/x1c/resume');
    expect(resumed.status).toBe(200);
    expect(stateOf(resumed.body)).toEqual({ state: 'running' });

    const stopped = await client.request('POST', '/machines/x1c/stop');
    expect(stopped.status).toBe(200);
    expect(stateOf(stopped.body)).toEqual({ state: 'idle' });
    expect(
      (stopped.body as { extra: { ExtraKindB: { print_error: string } } }).extra.ExtraKindB.print_error,
    ).toBe('0300-400C');
  });

  it('reports a wrong access code as a failed state with a message, never the code itself', async () => {
    const sim = await BambuPrinterSim.start({ accessCode: '11112222' });
    open.sims.push(sim);
    const api = await startMachineApi(`
[machines.p1s]
type = "Bambu"
name = "${sim.name}"
access_code = "secret-but-wrong"
host = "127.0.0.1"
serial = "${sim.serial}"
mqtt_port = ${sim.mqttPort}
ftps_port = ${sim.ftpsPort}
`);
    open.apis.push(api);
    const client = await ContractClient.create(api.baseUrl);
    const res = await waitFor(
      async () => {
        const current = await client.request('GET', '/machines/p1s');
        return (current.body as { state: { state: string } }).state.state === 'failed' ? current : undefined;
      },
      { what: 'the refused login in the listing' },
    );
    expect((res.body as { state: unknown }).state).toEqual({
      state: 'failed',
      message:
        'the printer refused the MQTT login: the access code is wrong (check access_code against the code shown on the printer)',
    });
    expect(res.text).not.toContain('secret-but-wrong');
  });

  it('refuses a config whose host has no serial, naming the machine and both keys', async () => {
    await expect(
      startMachineApi(`
[machines.lonely]
type = "Bambu"
name = "Lonely"
access_code = "12345678"
host = "192.0.2.10"
`),
    ).rejects.toThrow('machines.lonely: `host` needs `serial` too');
  });
});
