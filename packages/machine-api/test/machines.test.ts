import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContractClient } from './contract.js';
import { type MachineApiUnderTest, startMachineApi } from './harness.js';

const CONFIG = `
[server]
status_timeout_ms = 300

[machines.zeta]
type = "Noop"
manufacturer = "Prusa Research"
model = "MK3S"
serial = "CZPX1234"
nozzle_diameter = 0.4
loaded_filament_idx = 1
max_part_volume = { width = 250, depth = 210, height = 200 }
[[machines.zeta.filaments]]
material.type = "pla"
[[machines.zeta.filaments]]
material.type = "petg"
name = "Prusament PETG"
color = "FF8800"

[machines.alpha]
type = "Noop"
machine_type = "Cnc"
state = { state = "failed", message = "spindle jammed" }
progress = 42.5

[machines.mid]
type = "Noop"
state.state = "running"
nozzle_diameter = 0.6

[machines.sleepy]
type = "Noop"
status_delay_ms = 60000
`;

const NOOP_MAKE_MODEL = { manufacturer: 'Zoo Corporation', model: 'Null Machine', serial: 'Cheerios' };
const NOOP_VOLUME = { width: 500, depth: 600, height: 700 };

describe('machines', () => {
  let api: MachineApiUnderTest;
  let client: ContractClient;
  beforeAll(async () => {
    api = await startMachineApi(CONFIG);
    client = await ContractClient.create(api.baseUrl);
  });
  afterAll(() => api.close());

  const alpha = {
    id: 'alpha',
    make_model: NOOP_MAKE_MODEL,
    machine_type: 'Cnc',
    max_part_volume: NOOP_VOLUME,
    extra: null,
    state: { state: 'failed', message: 'spindle jammed' },
    progress: 42.5,
    hardware_configuration: { type: 'none' },
    ready: false,
    awaiting_clear_since: null,
    design_types: ['gcode', 'stl', '3mf', 'obj'],
    capabilities: { control: true, reason: null },
    temperatures: { extruder: { current: 25, target: 0 }, bed: { current: 25, target: 0 } },
    current_job: null,
    camera: null,
  };
  const mid = {
    id: 'mid',
    make_model: NOOP_MAKE_MODEL,
    machine_type: 'FusedDeposition',
    max_part_volume: NOOP_VOLUME,
    extra: null,
    state: { state: 'running' },
    progress: null,
    hardware_configuration: {
      type: 'fdm',
      config: { nozzle_diameter: 0.6, filaments: [], loaded_filament_idx: null },
    },
    ready: false,
    awaiting_clear_since: null,
    design_types: ['gcode', 'stl', '3mf', 'obj'],
    capabilities: { control: true, reason: null },
    temperatures: { extruder: { current: 25, target: 0 }, bed: { current: 25, target: 0 } },
    current_job: null,
    camera: null,
  };
  const sleepyOffline = {
    id: 'sleepy',
    make_model: NOOP_MAKE_MODEL,
    machine_type: 'FusedDeposition',
    max_part_volume: NOOP_VOLUME,
    extra: null,
    state: { state: 'offline' },
    progress: null,
    hardware_configuration: null,
    ready: false,
    awaiting_clear_since: null,
    design_types: ['gcode', 'stl', '3mf', 'obj'],
    capabilities: { control: true, reason: null },
    temperatures: {},
    current_job: null,
    camera: null,
  };
  const zeta = {
    id: 'zeta',
    make_model: { manufacturer: 'Prusa Research', model: 'MK3S', serial: 'CZPX1234' },
    machine_type: 'FusedDeposition',
    max_part_volume: { width: 250, depth: 210, height: 200 },
    extra: null,
    state: { state: 'idle' },
    progress: null,
    hardware_configuration: {
      type: 'fdm',
      config: {
        nozzle_diameter: 0.4,
        filaments: [
          { material: { type: 'pla' } },
          { name: 'Prusament PETG', material: { type: 'petg' }, color: 'FF8800' },
        ],
        loaded_filament_idx: 1,
      },
    },
    ready: true,
    awaiting_clear_since: null,
    design_types: ['gcode', 'stl', '3mf', 'obj'],
    capabilities: { control: true, reason: null },
    temperatures: { extruder: { current: 25, target: 0 }, bed: { current: 25, target: 0 } },
    current_job: null,
    camera: null,
  };

  it('GET /ping answers {"message":"pong"}', async () => {
    const res = await client.request('GET', '/ping');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.text).toBe('{"message":"pong"}');
  });

  it('GET /machines lists every configured machine sorted by id; an unresponsive one is reported offline', async () => {
    const res = await client.request('GET', '/machines');
    expect(res.status).toBe(200);
    expect(res.body).toEqual([alpha, mid, sleepyOffline, zeta]);
  });

  it('GET /machines/{id} answers one machine with its configured identity, volume override and filaments', async () => {
    const res = await client.request('GET', '/machines/zeta');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(zeta);
    expect((await client.request('GET', '/machines/alpha')).body).toEqual(alpha);
  });

  it('GET /machines/{id} of an unresponsive machine reports it offline instead of failing', async () => {
    const res = await client.request('GET', '/machines/sleepy');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(sleepyOffline);
  });

  it('GET /machines/{id} of an unknown machine is 404 NotFound naming the id', async () => {
    const res = await client.request('GET', '/machines/nope');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      request_id: res.headers.get('x-request-id'),
      error_code: 'NotFound',
      message: 'no machine with id "nope"',
    });
  });

  it('pause, resume and stop of a machine that is not printing are 409 MachineRejected', async () => {
    for (const action of ['pause', 'resume', 'stop']) {
      const res = await client.request('POST', `/machines/zeta/${action}`);
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({
        error_code: 'MachineRejected',
        message: `cannot ${action}: machine "zeta" is not printing`,
      });
    }
    expect((await client.request('POST', '/machines/nope/pause')).status).toBe(404);
  });
});
