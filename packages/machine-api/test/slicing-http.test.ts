import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContractClient } from './contract.js';
import {
  asciiStl,
  binaryStl,
  cube,
  obj,
  requirePrusaSlicer,
  sphere,
  threeMf,
  threeMfModel,
} from './design-fixtures.js';
import { getJson, type MachineApiUnderTest, startMachineApi, waitFor } from './harness.js';

const generic = new URL('../profiles/generic-fdm-0.4.ini', import.meta.url).pathname;

/** A Noop machine that slices with the bundled generic profile (220 × 220 × 250 mm) and prints instantly. */
const slicingMachine = (id: string) =>
  `[machines.${id}]\ntype = "Noop"\nprint_seconds = 0\nslicer = { type = "Prusa", config = "printer.ini" }\n`;

// One machine per test case: a machine is free again only once its previous job has been wound up.
const CONFIG = `
${['slicing', 'binary', 'obj', '3mf', 'checks'].map(slicingMachine).join('\n')}

[machines.bambu-like]
type = "Noop"
print_seconds = 0
print_format = "gcode.3mf"
slicer = { type = "Prusa", config = "printer.ini" }

[machines.small]
type = "Noop"
print_seconds = 0
slicer = { type = "Prusa", config = "printer.ini" }
max_part_volume = { width = 100, depth = 120, height = 80 }

[machines.impatient]
type = "Noop"
print_seconds = 0
slicer = { type = "Prusa", config = "printer.ini", timeout_seconds = 0.05 }

[machines.plain]
type = "Noop"
print_seconds = 0
auto_clear = true
`;

interface Estimate {
  print_time_seconds: number | null;
  filament_used_mm: number | null;
  filament_used_cm3: number | null;
  filament_used_g: number | null;
}

interface JobBody {
  id: string;
  status: string;
  message: string | null;
  estimate: Estimate | null;
}

interface ErrorBody {
  error_code: string;
  message: string;
}

describe('POST /print with slicing through the real service', () => {
  let api: MachineApiUnderTest;
  let client: ContractClient;
  beforeAll(async () => {
    requirePrusaSlicer();
    api = await startMachineApi(CONFIG, { files: { 'printer.ini': await readFile(generic) } });
    client = await ContractClient.create(api.baseUrl);
  });
  afterAll(() => api?.close());

  const filesLeft = async () => [
    ...(await readdir(join(api.dataDir, 'jobs'))),
    ...(await readdir(join(api.dataDir, 'uploads'))),
  ];

  async function print(machineId: string, file: string | Uint8Array, fileName: string) {
    const body = new FormData();
    body.append('params', JSON.stringify({ machine_id: machineId, job_name: fileName }));
    body.append('file', new Blob([file]), fileName);
    return client.request<{ job_id: string } & ErrorBody>('POST', '/print', { body });
  }

  async function finished(jobId: string): Promise<JobBody> {
    return waitFor(
      async () => {
        const job = (await client.request<JobBody>('GET', `/jobs/${jobId}`)).body;
        return ['completed', 'failed', 'cancelled'].includes(job.status) ? job : undefined;
      },
      { what: `job ${jobId} to finish` },
    );
  }

  it('slices an STL, completes the job, keeps the estimate on it and removes every temp file', async () => {
    const res = await print('slicing', asciiStl(cube(20)), 'cube.stl');
    expect(res.status).toBe(200);
    const job = await finished(res.body.job_id);
    expect(job.status).toBe('completed');
    expect(job.message).toBeNull();
    expect(job.estimate).not.toBeNull();
    expect(job.estimate?.print_time_seconds).toBeGreaterThan(60);
    expect(job.estimate?.filament_used_mm).toBeGreaterThan(100);
    expect(job.estimate?.filament_used_cm3).toBeGreaterThan(0);
    // The generic profile sets a PLA density, so PrusaSlicer reports grams: 1.24 g/cm³.
    expect(job.estimate?.filament_used_g).toBeCloseTo((job.estimate?.filament_used_cm3 ?? 0) * 1.24, 1);
    await waitFor(async () => (await filesLeft()).length === 0, { what: 'temp files to be removed' });
  });

  it('slices binary STL, OBJ and 3MF uploads whatever their file names say', async () => {
    for (const [machine, file, name] of [
      ['binary', binaryStl(cube(20)), 'cube.bin'],
      ['obj', obj(cube(20)), 'cube.txt'],
      ['3mf', threeMf(threeMfModel(cube(20))), 'cube.zip'],
    ] as const) {
      const res = await print(machine, file, name);
      expect(res.status, name).toBe(200);
      const job = await finished(res.body.job_id);
      expect(job.status, name).toBe('completed');
      expect(job.estimate?.print_time_seconds, name).toBeGreaterThan(0);
    }
  });

  it('packages a .gcode.3mf for a machine that takes one and completes the job', async () => {
    const res = await print('bambu-like', asciiStl(cube(20)), 'cube.stl');
    expect(res.status).toBe(200);
    const job = await finished(res.body.job_id);
    expect(job.status).toBe('completed');
    expect(job.estimate?.print_time_seconds).toBeGreaterThan(0);
    await waitFor(async () => (await filesLeft()).length === 0, { what: 'temp files to be removed' });
  });

  it('refuses a part bigger than max_part_volume with 400 InvalidDesign before slicing', async () => {
    const machine = await getJson<{ max_part_volume: unknown }>(api.baseUrl, '/machines/small');
    expect(machine.max_part_volume).toEqual({ width: 100, depth: 120, height: 80 });
    const res = await print('small', binaryStl(cube(90)), 'cube90.stl');
    expect(res.status).toBe(400);
    expect(res.body.error_code).toBe('InvalidDesign');
    expect(res.body.message).toBe(
      'this machine has a build volume of 100 × 120 × 80 mm, smaller than the design ' +
        '(90 × 90 × 90 mm, width × depth × height)',
    );
    expect(await filesLeft()).toEqual([]);
    const fits = await print('small', binaryStl(cube(60)), 'cube60.stl');
    expect(fits.status, JSON.stringify(fits.body)).toBe(200);
    expect((await finished(fits.body.job_id)).status).toBe('completed');
  });

  it('refuses a corrupt or truncated design with 400 InvalidDesign saying what is wrong', async () => {
    const whole = binaryStl(cube(20));
    const res = await print('checks', whole.subarray(0, 300), 'cut.stl');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      error_code: 'InvalidDesign',
      message:
        'binary STL is truncated: its header announces 12 triangles (684 bytes) but the file has 300 bytes',
    });
    const empty = await print('checks', 'solid nothing\nendsolid nothing\n', 'empty.stl');
    expect(empty.status).toBe(400);
    expect(empty.body.message).toBe('ASCII STL contains no triangles');
    expect(await filesLeft()).toEqual([]);
  });

  it('answers 400 SlicingFailed when the slicer exceeds its timeout, kills it and records no job', async () => {
    const res = await print('impatient', binaryStl(sphere(50, 300, 400)), 'ball.stl');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      error_code: 'SlicingFailed',
      message: 'slicing took longer than 0.05 s and was stopped',
    });
    expect(await getJson<JobBody[]>(api.baseUrl, '/jobs?machine_id=impatient')).toEqual([]);
    expect(await filesLeft()).toEqual([]);
  });

  it('a Noop machine without a slicer simulates any design, as the anchor does, but refuses one too big', async () => {
    for (const [name, content] of [
      ['cube.stl', asciiStl(cube(20))],
      ['cube.obj', obj(cube(20))],
      ['cube.3mf', threeMf(threeMfModel(cube(20)))],
    ] as const) {
      const design = await print('plain', content, name);
      expect(design.status, name).toBe(200);
      expect(await finished(design.body.job_id)).toMatchObject({ status: 'completed', estimate: null });
    }
    const big = await print('plain', asciiStl(cube(800)), 'big.stl');
    expect(big.status).toBe(400);
    expect(big.body).toMatchObject({
      error_code: 'InvalidDesign',
      message:
        'this machine has a build volume of 500 × 600 × 700 mm, smaller than the design (800 × 800 × 800 mm, width × depth × height)',
    });
    const gcode = await print('plain', 'G28\nG1 X10 Y10 Z0.2 F3000\nM104 S0\n', 'part.gcode');
    expect(gcode.status).toBe(200);
    const job = await finished(gcode.body.job_id);
    expect(job).toMatchObject({ status: 'completed', estimate: null });
  });
});
