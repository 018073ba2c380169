import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContractClient } from './contract.js';
import { type MachineApiUnderTest, startMachineApi, waitFor } from './harness.js';
import { MarlinSim } from './sim/marlin.js';

const UUID = 'cede2a2f-41a2-4748-9b12-c55c62f367ff';

describe('USB printers through the HTTP service', () => {
  let sim: MarlinSim;
  let api: MachineApiUnderTest;
  let client: ContractClient;

  beforeAll(async () => {
    sim = await MarlinSim.start({ machineType: 'Ender-3 V2', uuid: UUID });
    api = await startMachineApi(`
[machines.ender]
type = "Usb"
variant = "Generic"
port = "${sim.hostPath}"
baud = 115200
nozzle_diameter = 0.4
[[machines.ender.filaments]]
material.type = "pla"

[machines.unplugged]
type = "Usb"
variant = "PrusaMk3"
port = "${sim.hostPath}-not-there"

# Discovered by USB ids: here real enumeration runs (and fails without udev, which must not be fatal).
[machines.zz-by-ids]
type = "Usb"
variant = "Generic"
vendor_id = 0x1a86
product_id = 0x7523
`);
    client = await ContractClient.create(api.baseUrl);
    await waitFor(
      async () => {
        const { body } = await client.request<{ state: { state: string } }>('GET', '/machines/ender');
        return body.state.state === 'idle';
      },
      { what: 'the USB printer to be connected' },
    );
  });

  afterAll(async () => {
    await api?.close();
    await sim?.close();
  });

  it('lists the printer with its M115 identity and {"Usb": {…}} extra', async () => {
    const response = await client.request('GET', '/machines');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.body).toEqual([
      {
        id: 'ender',
        make_model: { manufacturer: null, model: 'Ender-3 V2', serial: UUID },
        machine_type: 'FusedDeposition',
        max_part_volume: null,
        extra: {
          Usb: {
            port: sim.hostPath,
            baud: 115200,
            variant: 'Generic',
            firmware_name: 'Marlin 2.1.2.1 (Jul 12 2023 12:00:00)',
            protocol_version: '1.0',
            machine_type: 'Ender-3 V2',
            uuid: UUID,
            vendor_id: null,
            product_id: null,
            capabilities: { AUTOREPORT_TEMP: true, EEPROM: true, HOST_ACTION_COMMANDS: true },
          },
        },
        state: { state: 'idle' },
        progress: null,
        ready: true,
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
      },
      {
        id: 'unplugged',
        make_model: { manufacturer: 'Prusa Research', model: 'MK3', serial: null },
        machine_type: 'FusedDeposition',
        max_part_volume: { width: 250, depth: 210, height: 210 },
        extra: {
          Usb: {
            port: null,
            baud: 115200,
            variant: 'PrusaMk3',
            firmware_name: null,
            protocol_version: null,
            machine_type: null,
            uuid: null,
            vendor_id: null,
            product_id: null,
            capabilities: {},
          },
        },
        state: { state: 'offline' },
        progress: null,
        ready: false,
        awaiting_clear_since: null,
        design_types: ['gcode'],
        capabilities: { control: true, reason: null },
        temperatures: {},
        hardware_configuration: null,
        current_job: null,
        camera: null,
      },
      {
        id: 'zz-by-ids',
        make_model: { manufacturer: null, model: null, serial: null },
        machine_type: 'FusedDeposition',
        max_part_volume: null,
        extra: {
          Usb: {
            port: null,
            baud: 115200,
            variant: 'Generic',
            firmware_name: null,
            protocol_version: null,
            machine_type: null,
            uuid: null,
            vendor_id: null,
            product_id: null,
            capabilities: {},
          },
        },
        state: { state: 'offline' },
        progress: null,
        ready: false,
        awaiting_clear_since: null,
        design_types: ['gcode'],
        capabilities: { control: true, reason: null },
        temperatures: {},
        hardware_configuration: null,
        current_job: null,
        camera: null,
      },
    ]);
  });

  it('refuses to pause a printer that is not printing, in the service’s error format', async () => {
    const response = await client.request<{ error_code: string; message: string }>(
      'POST',
      '/machines/ender/pause',
    );
    expect(response.status).toBe(409);
    expect(response.body).toMatchObject({ error_code: 'MachineRejected', message: 'ender is not printing' });
  });
});
