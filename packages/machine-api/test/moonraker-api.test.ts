/**
 * Moonraker printers through the real HTTP service: listing with identity and ExtraKindA facts, a
 * Moonraker that is down listed as offline, live state and temperatures, and the machine controls.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContractClient } from './contract.js';
import { type MachineApiUnderTest, startMachineApi, waitFor } from './harness.js';
import { MoonrakerSim } from './sim/moonraker.js';

interface MachineInfo {
  id: string;
  state: { state: string; message?: string | null };
  progress: number | null;
  extra: { ExtraKindA: Record<string, unknown> } | null;
}

describe('Moonraker machines over HTTP', () => {
  let neptune: MoonrakerSim;
  let gone: MoonrakerSim;
  let api: MachineApiUnderTest;
  let client: ContractClient;

  beforeAll(async () => {
    neptune = await MoonrakerSim.start({ apiKey: 's3cret-key' });
    gone = await MoonrakerSim.start();
    await gone.refuse();
    api = await startMachineApi(`
[machines.neptune]
type = "Moonraker"
endpoint = "${neptune.endpoint}/"
variant = "ElegooNeptune4"
api_key = "s3cret-key"
nozzle_diameter = 0.4
poll_interval_seconds = 0.2
timeout_seconds = 2
[[machines.neptune.filaments]]
material.type = "pla"

[machines.voron]
type = "Moonraker"
endpoint = "${gone.endpoint}"
variant = "Generic"
nozzle_diameter = 0.4
timeout_seconds = 1
filaments = []
`);
    client = await ContractClient.create(api.baseUrl);
  });

  afterAll(async () => {
    await api?.close();
    await neptune?.close();
    await gone?.close();
  });

  it('lists the Moonraker printer with its identity and ExtraKindA facts, and an unreachable one as offline', async () => {
    const response = await client.request<MachineInfo[]>('GET', '/machines');
    expect(response.status).toBe(200);
    expect(response.body).toEqual([
      {
        id: 'neptune',
        make_model: { manufacturer: 'Elegoo', model: 'Neptune 4', serial: null },
        machine_type: 'FusedDeposition',
        max_part_volume: { width: 225, depth: 225, height: 265 },
        extra: {
          ExtraKindA: {
            endpoint: neptune.endpoint,
            variant: 'ElegooNeptune4',
            reachable: true,
            connection: expect.stringMatching(/^(websocket|polling|none)$/),
            last_error: null,
            klippy_state: 'ready',
            klippy_state_message: 'Printer is ready',
            klipper_version: 'v0.12.0-sim',
            moonraker_version: 'v0.9.3-12-gsim',
            api_version: '1.5.0',
            hostname: 'moonraker-sim',
            print_state: 'standby',
            print_filename: null,
            print_message: null,
          },
        },
        state: { state: 'idle' },
        progress: null,
        ready: true,
        awaiting_clear_since: null,
        design_types: ['gcode'],
        capabilities: { control: true, reason: null },
        temperatures: { bed: { current: 21.8, target: 0 }, extruder: { current: 22.5, target: 0 } },
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
      },
      {
        id: 'voron',
        make_model: { manufacturer: null, model: null, serial: null },
        machine_type: 'FusedDeposition',
        max_part_volume: null,
        extra: {
          ExtraKindA: expect.objectContaining({
            endpoint: gone.endpoint,
            reachable: false,
            last_error: expect.stringContaining('ECONNREFUSED'),
          }),
        },
        state: { state: 'offline' },
        progress: null,
        ready: false,
        awaiting_clear_since: null,
        design_types: ['gcode'],
        capabilities: { control: true, reason: null },
        temperatures: {},
        hardware_configuration: {
          type: 'fdm',
          config: { nozzle_diameter: 0.4, filaments: [], loaded_filament_idx: null },
        },
        current_job: null,
        camera: null,
      },
    ]);
    expect(response.text).not.toContain('s3cret-key');
    expect(neptune.requests.every((request) => request.headers['x-api-key'] === 's3cret-key')).toBe(true);
  });

  it('shows a print started at the printer as running with progress, and exports its temperatures', async () => {
    neptune.files.set('from-fluidd.gcode', Buffer.from('M104 S230\nM140 S70\nG28\n'));
    const started = await fetch(`${neptune.endpoint}/printer/print/start`, {
      method: 'POST',
      headers: { 'X-Api-Key': 's3cret-key', 'Content-Type': 'application/json' },
      body: JSON.stringify({ filename: 'from-fluidd.gcode' }),
    });
    expect(await started.json()).toEqual({ result: 'ok' });
    neptune.advance(0.4);
    const machine = await waitFor(
      async () => {
        const response = await client.request<MachineInfo>('GET', '/machines/neptune');
        return response.body.progress === 40 && response.body;
      },
      { what: 'progress 40 on GET /machines/neptune' },
    );
    expect(machine.state).toEqual({ state: 'running' });
    expect(machine.extra?.ExtraKindA).toMatchObject({
      print_state: 'printing',
      print_filename: 'from-fluidd.gcode',
    });

    const metrics = await fetch(`${api.baseUrl}/metrics`);
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    expect(text).toContain(
      'machine_api_machine_target_temperature_celsius{id="neptune",sensor="extruder"} 230',
    );
    expect(text).toContain('machine_api_machine_target_temperature_celsius{id="neptune",sensor="bed"} 70');
    expect(text).toContain('machine_api_machine_progress_percent{id="neptune"} 40');
    expect(text).toContain('machine_api_machine_state{id="voron",state="offline"} 1');
  });

  it('pauses, resumes and stops the print through POST /machines/{id}/pause|resume|stop', async () => {
    const paused = await client.request<MachineInfo>('POST', '/machines/neptune/pause');
    expect(paused.status).toBe(200);
    expect(paused.body.state).toEqual({ state: 'paused' });
    expect(neptune.printStats['state']).toBe('paused');

    const again = await client.request<{ error_code: string; message: string }>(
      'POST',
      '/machines/neptune/pause',
    );
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      error_code: 'MachineRejected',
      message: 'cannot pause machine neptune: Klipper ready, print paused',
    });

    const resumed = await client.request<MachineInfo>('POST', '/machines/neptune/resume');
    expect(resumed.status).toBe(200);
    expect(resumed.body.state).toEqual({ state: 'running' });

    const stopped = await client.request<MachineInfo>('POST', '/machines/neptune/stop');
    expect(stopped.status).toBe(200);
    // Cancelled by hand, not by a job of this service: Klipper's `cancelled` stays visible as complete.
    expect(stopped.body.state).toEqual({ state: 'complete' });
    expect(neptune.printStats['state']).toBe('cancelled');
  });

  it('answers 503 for a control sent to a Moonraker that does not answer', async () => {
    const response = await client.request<{ error_code: string; message: string }>(
      'POST',
      '/machines/voron/stop',
    );
    expect(response.status).toBe(503);
    expect(response.body).toMatchObject({
      error_code: 'MachineOffline',
      message: expect.stringMatching(/^cannot reach Moonraker at http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/),
    });
  });
});
