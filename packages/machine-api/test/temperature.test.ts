/**
 * Heater targets over HTTP (`POST /machines/{id}/temperature`, `GET /presets`) on every backend: the
 * simulation, Marlin over a serial port (M104/M140), Moonraker (`SET_HEATER_TEMPERATURE` through
 * `/printer/gcode/script`) and Bambu (`print.gcode_line` over MQTT). Limits, printing machines and hostile
 * bodies are refused in the Error shape and change nothing.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContractClient } from './contract.js';
import { type MachineApiUnderTest, startMachineApi, waitFor } from './harness.js';
import { BambuPrinterSim } from './sim/bambu.js';
import { MarlinSim } from './sim/marlin.js';
import { MoonrakerSim } from './sim/moonraker.js';

interface Info {
  state: { state: string };
  temperatures: Record<string, { current: number; target: number | null }>;
}
interface ErrorBody {
  error_code: string;
  message: string;
}

const json = (body: unknown): RequestInit => ({
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

describe('heater targets', () => {
  let api: MachineApiUnderTest;
  let client: ContractClient;
  let marlin: MarlinSim;
  let moonraker: MoonrakerSim;
  let bambu: BambuPrinterSim;

  beforeAll(async () => {
    [marlin, moonraker, bambu] = await Promise.all([
      MarlinSim.start(),
      MoonrakerSim.start(),
      BambuPrinterSim.start(),
    ]);
    api = await startMachineApi(`
[presets.pla]
tool = 215
bed = 60

[presets.petg]
tool = 240
bed = 80

[presets.hot]
tool = 280

[machines.sim]
type = "Noop"
max_tool_temp = 250
[[machines.sim.filaments]]
material.type = "pla"

[machines.busy]
type = "Noop"
state.state = "running"
[[machines.busy.filaments]]
material.type = "pla"

[machines.gone]
type = "Noop"
state.state = "offline"

[machines.ender]
type = "Usb"
variant = "Generic"
port = "${marlin.hostPath}"
baud = 115200
[[machines.ender.filaments]]
material.type = "petg"

[machines.voron]
type = "Moonraker"
variant = "Generic"
endpoint = "${moonraker.endpoint}"

${bambu.machineToml('x1c')}`);
    client = await ContractClient.create(api.baseUrl);
    for (const id of ['ender', 'voron', 'x1c']) {
      await waitFor(
        async () => (await client.request<Info>('GET', `/machines/${id}`)).body.state.state === 'idle',
        { what: `${id} to be idle` },
      );
    }
  });

  afterAll(async () => {
    await api?.close();
    await Promise.all([marlin?.close(), moonraker?.close(), bambu?.close()]);
  });

  it('lists the configured presets by name', async () => {
    const res = await client.request('GET', '/presets');
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { name: 'hot', tool: 280, bed: null },
      { name: 'petg', tool: 240, bed: 80 },
      { name: 'pla', tool: 215, bed: 60 },
    ]);
  });

  it('sets a simulated machine to a preset and answers with the machine showing the targets', async () => {
    const res = await client.request<Info>('POST', '/machines/sim/temperature', json({ preset: 'pla' }));
    expect(res.status).toBe(200);
    expect(res.body.temperatures).toEqual({
      extruder: { current: 215, target: 215 },
      bed: { current: 60, target: 60 },
    });
    const bedOnly = await client.request<Info>('POST', '/machines/sim/temperature', json({ bed: 0 }));
    expect(bedOnly.status).toBe(200);
    expect(bedOnly.body.temperatures).toEqual({
      extruder: { current: 215, target: 215 },
      bed: { current: 25, target: 0 },
    });
  });

  it('refuses targets above the machine limit with 400 and changes nothing', async () => {
    await client.request('POST', '/machines/sim/temperature', json({ tool: 200, bed: 50 }));
    const over = await client.request<ErrorBody>('POST', '/machines/sim/temperature', json({ tool: 260 }));
    expect(over.status).toBe(400);
    expect(over.body.error_code).toBe('BadRequest');
    expect(over.body.message).toBe(
      'tool: 260 °C is above machine "sim"\'s limit of 250 °C (max_tool_temp in its configuration)',
    );
    // A preset within another machine's limits is still over this one's.
    const preset = await client.request<ErrorBody>(
      'POST',
      '/machines/sim/temperature',
      json({ preset: 'hot' }),
    );
    expect(preset.status).toBe(400);
    const bed = await client.request<ErrorBody>('POST', '/machines/ender/temperature', json({ bed: 121 }));
    expect(bed.status).toBe(400);
    expect(bed.body.message).toBe(
      'bed: 121 °C is above machine "ender"\'s limit of 120 °C (max_bed_temp in its configuration)',
    );
    const after = await client.request<Info>('GET', '/machines/sim');
    expect(after.body.temperatures).toEqual({
      extruder: { current: 200, target: 200 },
      bed: { current: 50, target: 50 },
    });
  });

  it('refuses a printing machine and an offline one with 409', async () => {
    const busy = await client.request<ErrorBody>(
      'POST',
      '/machines/busy/temperature',
      json({ preset: 'pla' }),
    );
    expect(busy.status).toBe(409);
    expect(busy.body.error_code).toBe('MachineBusy');
    expect(busy.body.message).toBe(
      'machine "busy" is printing (running); temperatures are the print\'s until it ends',
    );
    const gone = await client.request<ErrorBody>('POST', '/machines/gone/temperature', json({ tool: 200 }));
    expect(gone.status).toBe(409);
    expect(gone.body.error_code).toBe('MachineRejected');
    expect(gone.body.message).toBe(
      'machine "gone" is offline; it cannot be given temperatures until it answers',
    );
  });

  it('answers hostile bodies with 400 in the Error shape and unknown machines with 404', async () => {
    const bodies: unknown[] = [
      {},
      { tool: '215' },
      { tool: -1 },
      { tool: 1e9 },
      { tool: null },
      { preset: 'pla', tool: 200 },
      { preset: 'nope' },
      { preset: '../../etc' },
      { preset: 'pla', extra: 1 },
      [215],
      'pla',
    ];
    for (const body of bodies) {
      const res = await client.request<ErrorBody>('POST', '/machines/sim/temperature', json(body));
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const notJson = await client.request('POST', '/machines/sim/temperature', {
      headers: { 'content-type': 'application/json' },
      body: '{"tool":',
    });
    expect(notJson.status).toBe(400);
    const unknown = await client.request<ErrorBody>('POST', '/presets', json({}));
    expect(unknown.status).toBe(405);
    const missing = await client.request<ErrorBody>('POST', '/machines/nope/temperature', json({ tool: 1 }));
    expect(missing.status).toBe(404);
    const noPreset = await client.request<ErrorBody>(
      'POST',
      '/machines/sim/temperature',
      json({ preset: 'abs' }),
    );
    expect(noPreset.body.message).toBe('no temperature preset "abs"; configured: "hot", "petg", "pla"');
    const after = await client.request<Info>('GET', '/machines/sim');
    expect(after.body.temperatures.extruder).toEqual({ current: 200, target: 200 });
  });

  it('sends M104 and M140 to a Marlin printer', async () => {
    const res = await client.request('POST', '/machines/ender/temperature', json({ preset: 'pla' }));
    expect(res.status).toBe(200);
    expect(marlin.commands).toEqual(expect.arrayContaining(['M104 S215', 'M140 S60']));
    await waitFor(async () => {
      const { body } = await client.request<Info>('GET', '/machines/ender');
      return body.temperatures.extruder?.target === 215 && body.temperatures.bed?.target === 60;
    });
  });

  it('runs SET_HEATER_TEMPERATURE through Moonraker', async () => {
    const res = await client.request<Info>(
      'POST',
      '/machines/voron/temperature',
      json({ tool: 240, bed: 80 }),
    );
    expect(res.status).toBe(200);
    expect(moonraker.scripts).toEqual([
      'SET_HEATER_TEMPERATURE HEATER=extruder TARGET=240',
      'SET_HEATER_TEMPERATURE HEATER=heater_bed TARGET=80',
    ]);
    expect(res.body.temperatures.extruder?.target).toBe(240);
    expect(res.body.temperatures.bed?.target).toBe(80);
  });

  it('sends print.gcode_line to a Bambu printer and answers once it reports the targets', async () => {
    const res = await client.request<Info>('POST', '/machines/x1c/temperature', json({ preset: 'petg' }));
    expect(res.status).toBe(200);
    const sent = bambu.commands.map((c) => c.print as Record<string, unknown> | undefined);
    expect(sent).toContainEqual(
      expect.objectContaining({ command: 'gcode_line', param: 'M104 S240\nM140 S80\n' }),
    );
    expect(res.body.temperatures.extruder?.target).toBe(240);
    expect(res.body.temperatures.bed?.target).toBe(80);
  });

  it('pre-heats named machines, skipping and naming the printing one', async () => {
    const res = await client.request(
      'POST',
      '/machines/preheat',
      json({ preset: 'pla', machines: ['voron', 'busy'] }),
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      preset: 'pla',
      heated: ['voron'],
      skipped: [
        {
          id: 'busy',
          error_code: 'MachineBusy',
          message: 'machine "busy" is printing (running); temperatures are the print\'s until it ends',
        },
      ],
    });
    expect(moonraker.scripts.slice(-2)).toEqual([
      'SET_HEATER_TEMPERATURE HEATER=extruder TARGET=215',
      'SET_HEATER_TEMPERATURE HEATER=heater_bed TARGET=60',
    ]);
  });

  it('pre-heats every machine with a material loaded', async () => {
    const res = await client.request('POST', '/machines/preheat', json({ preset: 'petg', material: 'pla' }));
    expect(res.status).toBe(200);
    // sim's limit is 250 °C: petg's 240 fits; busy prints; ender has PETG loaded, not PLA; the Bambu
    // printer reports PLA in its AMS.
    expect(res.body).toEqual({
      preset: 'petg',
      heated: ['sim', 'x1c'],
      skipped: [expect.objectContaining({ id: 'busy', error_code: 'MachineBusy' })],
    });
    const sim = await client.request<Info>('GET', '/machines/sim');
    expect(sim.body.temperatures.extruder).toEqual({ current: 240, target: 240 });
    const hot = await client.request('POST', '/machines/preheat', json({ preset: 'hot', material: 'pla' }));
    expect(hot.body).toEqual({
      preset: 'hot',
      heated: ['x1c'],
      skipped: [
        expect.objectContaining({ id: 'busy', error_code: 'MachineBusy' }),
        {
          id: 'sim',
          error_code: 'BadRequest',
          message:
            'tool: 280 °C is above machine "sim"\'s limit of 250 °C (max_tool_temp in its configuration)',
        },
      ],
    });
  });

  it('refuses a hostile pre-heat with 4xx and heats nothing', async () => {
    const before = moonraker.scripts.length;
    const bodies: unknown[] = [
      { preset: 'pla' },
      { preset: 'pla', machines: ['voron'], material: 'pla' },
      { preset: 'pla', machines: [] },
      { preset: 'pla', machines: [1] },
      { preset: 'pla', machines: ['voron', 'voron'] },
      { preset: 'pla', material: 'wood' },
      { preset: 'nope', machines: ['voron'] },
      { machines: ['voron'] },
      { preset: 'pla', machines: 'voron' },
      { preset: 'pla', machines: ['voron'], tool: 200 },
    ];
    for (const body of bodies) {
      const res = await client.request<ErrorBody>('POST', '/machines/preheat', json(body));
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const unknown = await client.request<ErrorBody>(
      'POST',
      '/machines/preheat',
      json({ preset: 'pla', machines: ['voron', 'nope'] }),
    );
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toBe('no machine with id "nope"');
    expect(moonraker.scripts.length).toBe(before);
  });
});
