/**
 * Spoolman over real HTTP, against the Spoolman simulator (its documented REST API): assigning spools
 * (per machine, per AMS slot, hostile bodies refused with nothing stored), the machine's filament
 * following the spool, use reports received exactly once (Spoolman stopped and started again included),
 * a spool Spoolman no longer has, and the queue holding a job the spool cannot finish until a spool change.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson, type MachineApiUnderTest, postPrint, startMachineApi, waitFor } from './harness.js';
import { SpoolmanSim } from './sim/spoolman.js';

/** 4 m and 12 g, as PrusaSlicer writes them. */
const GCODE =
  'G28\nG1 Z0.3 F3000\nG1 X10 Y10 E2 F1200\n; filament used [mm] = 4000\n; total filament used [g] = 12\n';

interface Spools {
  machine_id: string;
  spools: {
    slot: number | null;
    spool_id: number;
    name: string | null;
    material: string | null;
    color_hex: string | null;
    remaining_weight: number | null;
    assigned_at: string;
  }[];
  notice: string | null;
}

describe('Spoolman spools', () => {
  let sim: SpoolmanSim;
  let api: MachineApiUnderTest;

  beforeAll(async () => {
    sim = await new SpoolmanSim().start();
    sim.addSpool({ id: 12, remaining: 800, filament: { name: 'Galaxy Black', material: 'PETG' } });
    sim.addSpool({ id: 13, remaining: 1000, filament: { name: 'Signal Red', color_hex: 'C0392BFF' } });
    sim.addSpool({ id: 14, remaining: 10, filament: { name: 'Nearly Empty' } });
    sim.addSpool({ id: 15, remaining: 500 });
    api = await startMachineApi(`
[spoolman]
url = "${sim.url}"
timeout_ms = 2000

[machines.quick]
type = "Noop"
print_seconds = 0
clearing = "auto"
nozzle_diameter = 0.4
[[machines.quick.filaments]]
material.type = "pla"
name = "Configured PLA"

[machines.ams]
type = "Noop"
print_seconds = 0
clearing = "auto"
filament_slots = 4
nozzle_diameter = 0.4
loaded_filament_idx = 1
[[machines.ams.filaments]]
material.type = "pla"
[[machines.ams.filaments]]
material.type = "pla"
[[machines.ams.filaments]]
material.type = "pla"
`);
  });
  afterAll(async () => {
    await api?.close();
    await sim?.close();
  });

  const put = (machine: string, body: unknown) =>
    fetch(`${api.baseUrl}/machines/${machine}/spool`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const spoolsOf = async (machine: string) =>
    (await getJson<{ spoolman: Spools }>(api.baseUrl, `/machines/${machine}`)).spoolman;
  const jobReaches = (id: string, status: string) =>
    waitFor(
      async () => {
        const body = await getJson<{ status: string; filament: { spool_id?: number } | null }>(
          api.baseUrl,
          `/jobs/${id}`,
        );
        return body.status === status && body;
      },
      { what: `job ${id} ${status}` },
    );
  async function print(machineId: string): Promise<string> {
    const response = await postPrint(api.baseUrl, { machineId, jobName: 'part', file: GCODE });
    expect(response.status, await response.clone().text()).toBe(200);
    return ((await response.json()) as { job_id: string }).job_id;
  }

  it('assigns, unassigns and assigns per AMS slot; the machine reports the spool’s filament', async () => {
    const assigned = await put('quick', { spool_id: 12 });
    expect(assigned.status).toBe(200);
    const body = (await assigned.json()) as Spools;
    expect(body).toEqual({
      machine_id: 'quick',
      spools: [
        {
          slot: null,
          spool_id: 12,
          name: 'Galaxy Black',
          material: 'PETG',
          color_hex: '1A1A1A',
          remaining_weight: 800,
          assigned_at: expect.any(String),
        },
      ],
      notice: null,
    });
    const machine = await getJson<{
      hardware_configuration: { config: { filaments: unknown[]; loaded_filament_idx: number | null } };
      spoolman: Spools;
    }>(api.baseUrl, '/machines/quick');
    expect(machine.hardware_configuration.config).toMatchObject({
      filaments: [{ name: 'Galaxy Black', material: { type: 'petg' }, color: '1A1A1A' }],
      loaded_filament_idx: 0,
    });
    expect(machine.spoolman).toEqual(body);
    // The queue routes by the same filaments: the configured PLA is no longer loaded, the spool's PETG is.
    const form = new FormData();
    form.append('params', JSON.stringify({ job_name: 'pla', machine_ids: ['quick'], material: 'pla' }));
    form.append('file', new Blob([GCODE]), 'part.gcode');
    const refused = await fetch(`${api.baseUrl}/queue`, { method: 'POST', body: form });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { message: string }).message).toContain(
      '"quick" has petg loaded, not pla',
    );
    const listed = await getJson<{ id: string; spoolman: Spools; hardware_configuration: unknown }[]>(
      api.baseUrl,
      '/machines',
    );
    expect(listed.find((m) => m.id === 'quick')).toMatchObject({ spoolman: body });

    const slot = await put('ams', { slot: 2, spool_id: 13 });
    expect(slot.status).toBe(200);
    expect(((await slot.json()) as Spools).spools).toMatchObject([{ slot: 2, spool_id: 13 }]);
    const ams = await getJson<{ hardware_configuration: { config: { filaments: unknown[] } } }>(
      api.baseUrl,
      '/machines/ams',
    );
    expect(ams.hardware_configuration.config.filaments).toEqual([
      { material: { type: 'pla' } },
      { material: { type: 'pla' } },
      { name: 'Signal Red', material: { type: 'pla' }, color: 'C0392B' },
    ]);
    expect(await (await put('ams', { slot: 2, spool_id: null })).json()).toEqual({
      machine_id: 'ams',
      spools: [],
      notice: null,
    });
    expect((await spoolsOf('ams')).spools).toEqual([]);
  });

  it('refuses what it cannot store: slots on a machine without, unknown spools, hostile bodies', async () => {
    const before = await spoolsOf('quick');
    const slotless = await put('quick', { slot: 0, spool_id: 13 });
    expect(slotless.status).toBe(400);
    expect(await slotless.json()).toMatchObject({
      error_code: 'BadRequest',
      message: 'machine "quick" has no AMS slots; assign its spool without "slot"',
    });
    expect((await put('ams', { slot: 4, spool_id: 13 })).status).toBe(400);
    const unknown = await put('quick', { spool_id: 99 });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({
      error_code: 'UnknownSpool',
      message: 'Spoolman has no spool 99',
    });
    for (const body of [
      { spool_id: '13' },
      { spool_id: -1 },
      { spool_id: 0 },
      { spool_id: 1.5 },
      { spool_id: 1e300 },
      { spool_id: 13, extra: true },
      { slot: '1', spool_id: 13 },
      { slot: -1, spool_id: 13 },
      {},
      [],
      'not json',
    ]) {
      const response = await put('quick', body);
      expect(response.status, JSON.stringify(body)).toBe(400);
    }
    // A 1 MB string and a NUL byte, in the body and in the machine id: refused in the service's error shape.
    for (const [machine, body] of [
      ['quick', { spool_id: 'x'.repeat(1024 * 1024) }],
      ['quick', { spool_id: '1\u00002' }],
      ['qu%00ick', { spool_id: 13 }],
    ] as const) {
      const response = await put(machine, body);
      expect(response.status, machine).toBeGreaterThanOrEqual(400);
      expect(response.status, machine).toBeLessThan(500);
      expect(Object.keys((await response.json()) as object).sort(), machine).toEqual([
        'error_code',
        'message',
        'request_id',
      ]);
    }
    expect((await put('nope', { spool_id: 13 })).status).toBe(404);
    await sim.down();
    const down = await put('quick', { spool_id: 13 });
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({ error_code: 'SpoolmanUnavailable' });
    await sim.up();
    expect(await spoolsOf('quick')).toEqual(before);
  });

  it('a print on a machine with AMS slots uses the loaded slot’s spool', async () => {
    expect((await put('ams', { slot: 0, spool_id: 12 })).status).toBe(200);
    expect((await put('ams', { slot: 1, spool_id: 13 })).status).toBe(200);
    const first = sim.uses.length;
    expect((await jobReaches(await print('ams'), 'completed')).filament).toMatchObject({ spool_id: 13 });
    await waitFor(() => sim.uses.length > first, { what: 'the use report' });
    expect(sim.uses.slice(first)).toEqual([{ spool: 13, use_length: 4000 }]);
    expect((await put('ams', { slot: 0, spool_id: null })).status).toBe(200);
    expect((await put('ams', { slot: 1, spool_id: null })).status).toBe(200);
  });

  it('reports each print’s use once, in millimetres, and records the spool on the job', async () => {
    expect((await put('quick', { spool_id: 12 })).status).toBe(200);
    const first = sim.uses.length;
    const job = await jobReaches(await print('quick'), 'completed');
    expect(job.filament).toMatchObject({ spool_id: 12, used_m: 4 });
    await waitFor(() => sim.uses.length > first, { what: 'the use report' });
    expect(sim.uses.slice(first)).toEqual([{ spool: 12, use_length: 4000 }]);
    // Spoolman's answer becomes the machine's remaining weight.
    await waitFor(async () => ((await spoolsOf('quick')).spools[0]?.remaining_weight ?? 800) < 800);
  });

  it('keeps reports through a Spoolman outage and sends each once, in order, when it is back', async () => {
    const first = sim.uses.length;
    await sim.down();
    for (let i = 0; i < 2; i++) await jobReaches(await print('quick'), 'completed');
    // Spoolman being down holds up no request.
    expect((await fetch(`${api.baseUrl}/machines`)).status).toBe(200);
    expect(sim.uses.length).toBe(first);
    await sim.up();
    await waitFor(() => sim.uses.length >= first + 2, {
      timeoutMs: 30_000,
      what: 'the reports after the outage',
    });
    expect(sim.uses.slice(first)).toEqual([
      { spool: 12, use_length: 4000 },
      { spool: 12, use_length: 4000 },
    ]);
  });

  it('a spool Spoolman no longer has is unassigned, with a notice on the machine', async () => {
    expect((await put('quick', { spool_id: 15 })).status).toBe(200);
    const first = sim.uses.length;
    sim.spools.delete(15);
    await jobReaches(await print('quick'), 'completed');
    const spools = await waitFor(async () => {
      const current = await spoolsOf('quick');
      return current.notice !== null && current;
    });
    expect(spools).toEqual({
      machine_id: 'quick',
      spools: [],
      notice: expect.stringContaining('spool 15 was unassigned: Spoolman has no spool 15'),
    });
    expect(sim.uses.length).toBe(first);
  });

  it('the queue holds a job the spool cannot finish, says why, and starts it after a spool change', async () => {
    expect((await put('quick', { spool_id: 14 })).status).toBe(200);
    const form = new FormData();
    form.append('params', JSON.stringify({ job_name: 'too big', machine_ids: ['quick'] }));
    form.append('file', new Blob([GCODE]), 'part.gcode');
    const queued = await fetch(`${api.baseUrl}/queue`, { method: 'POST', body: form });
    expect(queued.status).toBe(201);
    const { id } = (await queued.json()) as { id: string };
    const entry = await waitFor(async () => {
      const entries = await getJson<{ job: { id: string }; machines: string[]; held: unknown[] }[]>(
        api.baseUrl,
        '/queue',
      );
      return entries.find((e) => e.job.id === id);
    });
    expect(entry).toMatchObject({
      machines: ['quick'],
      held: [
        {
          machine_id: 'quick',
          reason: 'has spool 14 with 10 g left (5 g kept as margin), the job needs 12 g',
        },
      ],
    });
    expect((await getJson<{ status: string }>(api.baseUrl, `/jobs/${id}`)).status).toBe('queued');
    expect((await put('quick', { spool_id: 13 })).status).toBe(200);
    expect((await jobReaches(id, 'completed')).filament).toMatchObject({ spool_id: 13 });
  });
});

describe('Spoolman use during a long print', () => {
  it('is reported as the print goes, and the reports add up to what the job used', async () => {
    const sim = await new SpoolmanSim().start();
    sim.addSpool({ id: 21, remaining: 1000 });
    const api = await startMachineApi(`
[spoolman]
url = "${sim.url}"
report_interval_s = 1

[machines.slow]
type = "Noop"
print_seconds = 3
clearing = "auto"
`);
    try {
      const assigned = await fetch(`${api.baseUrl}/machines/slow/spool`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ spool_id: 21 }),
      });
      expect(assigned.status).toBe(200);
      const response = await postPrint(api.baseUrl, { machineId: 'slow', jobName: 'long', file: GCODE });
      expect(response.status).toBe(200);
      const { job_id } = (await response.json()) as { job_id: string };
      await waitFor(
        async () =>
          (await getJson<{ status: string }>(api.baseUrl, `/jobs/${job_id}`)).status === 'completed',
        { what: 'the print to complete' },
      );
      await waitFor(() => Math.abs((sim.spools.get(21)?.used_length ?? 0) - 4000) < 0.01, {
        what: 'the reports to add up to 4000 mm',
      });
      // More than the one report at the end: the print was reported as it went.
      expect(sim.uses.length).toBeGreaterThan(1);
      expect(sim.uses.every((use) => use.spool === 21 && (use.use_length ?? 0) > 0)).toBe(true);
    } finally {
      await api.close();
      await sim.close();
    }
  });
});

describe('Spoolman not configured', () => {
  it('PUT /machines/{id}/spool says so', async () => {
    const api = await startMachineApi('[machines.sim]\ntype = "Noop"\n');
    try {
      const response = await fetch(`${api.baseUrl}/machines/sim/spool`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ spool_id: 12 }),
      });
      expect(response.status).toBe(409);
      expect(await response.json()).toMatchObject({
        error_code: 'SpoolmanNotConfigured',
        message:
          'no Spoolman server is configured: add [spoolman] url = "http://…" to the configuration to assign spools',
      });
      expect(await getJson(api.baseUrl, '/machines/sim')).not.toHaveProperty('spoolman');
    } finally {
      await api.close();
    }
  });
});
