/**
 * Bambu printers under Authorization Control firmware (2025) outside LAN-only Developer Mode: the printer
 * answers every command `result: "failed"`, `reason: "mqtt message verify failed"` (the simulator does as the
 * firmware does). The service keeps monitoring, reports `capabilities.control = false` with what to do,
 * answers control routes 409 with that message, and hands the printer no jobs (`ready: false`). Every other
 * machine reports full control.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContractClient } from './contract.js';
import { type MachineApiUnderTest, startMachineApi, waitFor } from './harness.js';
import { BambuPrinterSim } from './sim/bambu.js';

interface Info {
  state: { state: string };
  ready: boolean;
  capabilities: { control: boolean; reason: string | null };
  temperatures: Record<string, { current: number; target: number | null }>;
}
interface ErrorBody {
  error_code: string;
  message: string;
}

const REASON =
  'the printer refuses control commands (print.gcode_line: "mqtt message verify failed"): its firmware has Authorization Control, which lets LAN clients command it only in LAN-only Developer Mode. Enable LAN-only mode and Developer Mode on the printer\'s screen (Settings → Network); monitoring goes on meanwhile';

describe('Bambu Authorization Control', () => {
  let api: MachineApiUnderTest;
  let client: ContractClient;
  let sim: BambuPrinterSim;

  beforeAll(async () => {
    sim = await BambuPrinterSim.start();
    api = await startMachineApi(`
[presets.pla]
tool = 215

[machines.sim]
type = "Noop"

${sim.machineToml('x1c')}`);
    client = await ContractClient.create(api.baseUrl);
    await waitFor(
      async () => (await client.request<Info>('GET', '/machines/x1c')).body.state.state === 'idle',
      {
        what: 'x1c idle',
      },
    );
  });
  afterAll(async () => {
    await api?.close();
    await sim?.close();
  });

  const machine = async (id: string) => (await client.request<Info>('GET', `/machines/${id}`)).body;

  it('reports full control on every machine that takes commands', async () => {
    expect((await machine('sim')).capabilities).toEqual({ control: true, reason: null });
    expect((await machine('x1c')).capabilities).toEqual({ control: true, reason: null });
    const list = (await client.request<Info[]>('GET', '/machines')).body;
    for (const entry of list) expect(entry.capabilities).toEqual({ control: true, reason: null });
  });

  it('detects the refusal, answers 409 with what to do, keeps monitoring and dispatches nothing', async () => {
    sim.faults.authorizationControl = true;
    const refused = await client.request<ErrorBody>('POST', '/machines/x1c/temperature', {
      headers: { 'content-type': 'application/json' },
      body: '{"tool":200}',
    });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ error_code: 'MachineRejected', message: REASON });

    const after = await machine('x1c');
    expect(after.capabilities).toEqual({ control: false, reason: REASON });
    expect(after.state).toEqual({ state: 'idle' });
    expect(after.ready).toBe(false);
    const listed = (await client.request<(Info & { id: string })[]>('GET', '/machines')).body;
    expect(listed.find((m) => m.id === 'x1c')?.capabilities).toEqual({ control: false, reason: REASON });

    // Monitoring goes on: a report still reaches the machine's readings.
    sim.update({ nozzle_temper: 31.5 });
    await waitFor(async () => (await machine('x1c')).temperatures.extruder?.current === 31.5);

    // A print is refused before anything is uploaded.
    const form = new FormData();
    form.append('file', new Blob(['G28\n']), 'cube.gcode');
    form.append('params', JSON.stringify({ machine_id: 'x1c', job_name: 'cube' }));
    const print = await client.request<ErrorBody>('POST', '/print', { body: form });
    expect(print.status).toBe(409);
    expect(print.body.message).toContain('LAN-only Developer Mode');
    expect(
      sim.commands.filter((c) => (c.print as { command?: string } | undefined)?.command === 'project_file'),
    ).toEqual([]);

    // A pre-heat names it with the reason and heats the rest.
    const preheat = await client.request('POST', '/machines/preheat', {
      headers: { 'content-type': 'application/json' },
      body: '{"preset":"pla","machines":["sim","x1c"]}',
    });
    expect(preheat.status).toBe(200);
    expect(preheat.body).toEqual({
      preset: 'pla',
      heated: ['sim'],
      skipped: [{ id: 'x1c', error_code: 'MachineRejected', message: REASON }],
    });
  });

  it('gives control back once the printer accepts a command again (Developer Mode switched on)', async () => {
    sim.faults.authorizationControl = false;
    const accepted = await client.request<Info>('POST', '/machines/x1c/temperature', {
      headers: { 'content-type': 'application/json' },
      body: '{"tool":0}',
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body.capabilities).toEqual({ control: true, reason: null });
    await waitFor(async () => (await machine('x1c')).ready === true, { what: 'x1c ready again' });
  });
});
