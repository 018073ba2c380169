/**
 * Filament of every job, over real HTTP: estimated at submission from the slicer's output (PrusaSlicer
 * here; committed samples written from SuperSlicer's, OrcaSlicer's, Bambu Studio's and Cura's documented
 * comments, and a Bambu Studio 3MF's slice info), used at the end (Moonraker's own count, else the
 * estimate scaled by the progress reached), its cost; hostile comments change nothing.
 */

import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asciiStl, cube, requirePrusaSlicer } from './design-fixtures.js';
import { getJson, type MachineApiUnderTest, postPrint, startMachineApi, waitFor } from './harness.js';
import { MoonrakerSim } from './sim/moonraker.js';

const PROFILE = fileURLToPath(new URL('../profiles/elegoo-neptune4.ini', import.meta.url));
const fixture = (name: string) => readFile(new URL(`./fixtures/filament/${name}`, import.meta.url));
const MOVES = 'G28\nG1 Z0.3 F3000\nG1 X10 Y10 E2 F1200\nM104 S0\n';

interface Filament {
  estimated_g: number | null;
  estimated_m: number | null;
  used_g: number | null;
  used_m: number | null;
  cost: number | null;
  spool_id?: number;
}
interface JobBody {
  id: string;
  status: string;
  filament: Filament | null;
}

/** π (1.75/2)² mm² × 1.24 g/cm³: grams per metre of 1.75 mm PLA. */
const PLA_G_PER_M = Math.PI * 0.875 ** 2 * 1.24;

describe('filament of each job', () => {
  let sim: MoonrakerSim;
  let api: MachineApiUnderTest;

  beforeAll(async () => {
    requirePrusaSlicer();
    sim = await MoonrakerSim.start();
    api = await startMachineApi(`
[filament]
currency = "EUR"

[machines.quick]
type = "Noop"
print_seconds = 0
clearing = "auto"
[[machines.quick.filaments]]
material.type = "pla"
price_per_kg = 25

[machines.klipper]
type = "Moonraker"
endpoint = "${sim.endpoint}"
variant = "ElegooNeptune4"
slicer = { type = "Prusa", config = "${PROFILE}" }
nozzle_diameter = 0.4
timeout_seconds = 2
poll_interval_seconds = 0.2
clearing = "auto"
[[machines.klipper.filaments]]
material.type = "pla"
price_per_kg = 20
`);
  });
  afterAll(async () => {
    await api?.close();
    await sim?.close();
  });

  const job = (id: string) => getJson<JobBody>(api.baseUrl, `/jobs/${id}`);
  const jobReaches = (id: string, status: string) =>
    waitFor(
      async () => {
        const body = await job(id);
        return body.status === status && body;
      },
      { what: `job ${id} ${status}` },
    );
  async function printed(machineId: string, file: string | Uint8Array, fileName: string): Promise<JobBody> {
    const response = await postPrint(api.baseUrl, { machineId, jobName: fileName, file, fileName });
    expect(response.status, await response.clone().text()).toBe(200);
    const { job_id } = (await response.json()) as { job_id: string };
    return jobReaches(job_id, 'completed');
  }

  it("reads each slicer's comments: SuperSlicer, OrcaSlicer, Bambu Studio (grams), Cura (metres only)", async () => {
    const cases: [string, Partial<Filament>][] = [
      [
        'superslicer.gcode',
        { estimated_g: 3.68, estimated_m: 1.235, used_g: 3.68, used_m: 1.235, cost: 0.09 },
      ],
      ['orcaslicer.gcode', { estimated_g: 7.25, estimated_m: 2.346, used_g: 7.25, cost: 0.18 }],
      ['bambustudio.gcode', { estimated_g: 9.57, estimated_m: 3.211, used_g: 9.57, cost: 0.24 }],
      // Cura writes only a length: grams from the density of the machine's PLA.
      [
        'cura.gcode',
        {
          estimated_g: Math.round(2.5432 * PLA_G_PER_M * 100) / 100,
          estimated_m: 2.543,
          used_m: 2.543,
        },
      ],
    ];
    for (const [name, expected] of cases) {
      const done = await printed('quick', await fixture(name), name);
      expect(done.filament, name).toMatchObject(expected);
      expect(done.filament?.spool_id, name).toBeUndefined();
    }
  });

  it("reads a Bambu Studio 3MF's slice info: the first plate's filaments, summed", async () => {
    const done = await printed('quick', await fixture('bambu-project.3mf'), 'project.3mf');
    expect(done.filament).toEqual({
      estimated_g: 12.46,
      estimated_m: 4.13,
      used_g: 12.46,
      used_m: 4.13,
      cost: Math.round(12.46 * 0.025 * 100) / 100,
    });
  });

  it("PrusaSlicer's estimate when it slices; the printer's own count at the end (Klipper's filament_used)", async () => {
    const response = await postPrint(api.baseUrl, {
      machineId: 'klipper',
      jobName: 'cube',
      file: asciiStl(cube(20)),
      fileName: 'cube.stl',
    });
    expect(response.status).toBe(200);
    const { job_id } = (await response.json()) as { job_id: string };
    const printing = await jobReaches(job_id, 'printing');
    const estimated = printing.filament;
    expect(estimated?.estimated_g).toBeGreaterThan(1);
    expect(estimated?.estimated_m).toBeGreaterThan(0.3);
    expect(estimated).toMatchObject({ used_g: null, used_m: null, cost: null });
    sim.advance(1);
    const done = await jobReaches(job_id, 'completed');
    // The simulated Klipper pushes 1500 mm for a whole file.
    expect(done.filament).toMatchObject({
      estimated_g: estimated?.estimated_g,
      used_m: 1.5,
      used_g: Math.round(1.5 * PLA_G_PER_M * 100) / 100,
      cost: Math.round(1.5 * PLA_G_PER_M * 0.02 * 100) / 100,
    });
  });

  it('a cancelled print used what Klipper counted; without a plausible count, the estimate × progress', async () => {
    const gcode = `; generated by PrusaSlicer\n${MOVES}; filament used [mm] = 4000\n; total filament used [g] = 12\n`;
    const start = async (name: string) => {
      const response = await postPrint(api.baseUrl, { machineId: 'klipper', jobName: name, file: gcode });
      expect(response.status).toBe(200);
      const { job_id } = (await response.json()) as { job_id: string };
      await jobReaches(job_id, 'printing');
      return job_id;
    };
    const counted = await start('counted');
    sim.advance(0.5);
    await waitFor(
      async () => (await getJson<{ progress: number }>(api.baseUrl, '/machines/klipper')).progress === 50,
    );
    expect((await fetch(`${api.baseUrl}/jobs/${counted}/cancel`, { method: 'POST' })).status).toBe(200);
    expect((await jobReaches(counted, 'cancelled')).filament).toMatchObject({
      estimated_g: 12,
      used_m: 0.75,
    });
    await waitFor(async () => (await getJson<{ ready: boolean }>(api.baseUrl, '/machines/klipper')).ready);

    const guessed = await start('guessed');
    sim.advance(0.25);
    await waitFor(
      async () => (await getJson<{ progress: number }>(api.baseUrl, '/machines/klipper')).progress === 25,
    );
    sim.setFilamentUsed(-1);
    sim.failPrint('Move out of range: 500.000 0.000 0.300 [2.000]');
    expect((await jobReaches(guessed, 'failed')).filament).toEqual({
      estimated_g: 12,
      estimated_m: 4,
      used_g: 3,
      used_m: 1,
      cost: 0.06,
    });
  });

  it('hostile comments: 10^300 grams, a negative length, a 1 MB comment line are ignored, not clamped', async () => {
    const hostile = [
      '; generated by PrusaSlicer',
      `; ${'x'.repeat(1_000_000)} = 5`,
      MOVES,
      '; filament used [mm] = -1500',
      `; total filament used [g] = 1${'0'.repeat(300)}`,
      '; filament used [g] = 1e300',
      '; filament used [cm3] = NaN',
      '; total filament cost = Infinity',
      `; filament_type = ${'A'.repeat(5000)}`,
      '',
    ].join('\n');
    const done = await printed('quick', hostile, 'hostile.gcode');
    // Nothing usable is known: the job says so with null, and its totals are not touched.
    expect(done.filament).toBeNull();
    // A line of a megabyte carrying a real-looking figure is not read either.
    const long = `; filament used [g] = 7${' '.repeat(1_000_000)}\n${MOVES}; filament used [mm] = 1000\n`;
    const second = await printed('quick', long, 'long.gcode');
    expect(second.filament).toMatchObject({
      estimated_m: 1,
      estimated_g: Math.round(PLA_G_PER_M * 100) / 100,
    });
  });

  it('GET /stats: totals over every finished job, by machine, material and day; bad windows are 400', async () => {
    const jobs = await getJson<(JobBody & { machine_id: string; finished_at: string })[]>(
      api.baseUrl,
      '/jobs?limit=1000',
    );
    const finished = jobs.filter((j) => ['completed', 'failed', 'cancelled'].includes(j.status));
    const sum = (list: typeof finished, key: 'used_g' | 'used_m' | 'cost') =>
      list.reduce((total, j) => total + (j.filament?.[key] ?? 0), 0);
    const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;
    const all = await getJson<Record<string, unknown>>(api.baseUrl, '/stats');
    expect(all).toEqual({
      from: null,
      to: null,
      group_by: null,
      currency: 'EUR',
      total: {
        prints: finished.length,
        completed: finished.filter((j) => j.status === 'completed').length,
        failed: 1,
        cancelled: 1,
        success_rate: round(finished.filter((j) => j.status === 'completed').length / finished.length, 4),
        print_hours: expect.any(Number),
        grams: round(sum(finished, 'used_g'), 2),
        metres: round(sum(finished, 'used_m'), 3),
        cost: round(sum(finished, 'cost'), 2),
      },
      groups: [],
    });

    const byMachine = await getJson<{ groups: { key: string; totals: { prints: number; grams: number } }[] }>(
      api.baseUrl,
      '/stats?group_by=machine',
    );
    expect(byMachine.groups.map((g) => [g.key, g.totals.prints])).toEqual([
      ['klipper', finished.filter((j) => j.machine_id === 'klipper').length],
      ['quick', finished.filter((j) => j.machine_id === 'quick').length],
    ]);
    const byMaterial = await getJson<{ groups: { key: string }[] }>(api.baseUrl, '/stats?group_by=material');
    expect(byMaterial.groups.map((g) => g.key)).toEqual(['pla']);
    const today = new Date().toISOString().slice(0, 10);
    const byDay = await getJson<{ groups: { key: string }[] }>(api.baseUrl, '/stats?group_by=day');
    expect(byDay.groups.map((g) => g.key)).toEqual([today]);

    // A window that ends before the first job counts nothing.
    const empty = await getJson<{ total: Record<string, unknown> }>(
      api.baseUrl,
      `/stats?to=${encodeURIComponent('2020-01-01T00:00:00+01:00')}`,
    );
    expect(empty.total).toEqual({
      prints: 0,
      completed: 0,
      failed: 0,
      cancelled: 0,
      success_rate: null,
      print_hours: 0,
      grams: 0,
      metres: 0,
      cost: 0,
    });
    for (const query of [
      'from=yesterday',
      'to=2026-13-01T00:00:00Z',
      'group_by=planet',
      'from=2026-11-27T10:00:00Z&to=2026-11-27T09:00:00Z',
      `from=${'9'.repeat(5000)}`,
    ]) {
      const res = await fetch(`${api.baseUrl}/stats?${query}`);
      expect(res.status, query).toBe(400);
      expect(await res.json()).toMatchObject({ error_code: 'BadRequest' });
    }
  });
});
