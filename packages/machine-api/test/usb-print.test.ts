import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SAFE_END_GCODE } from '../src/machines/usb/print-stream.js';
import { PrusaSlicer } from '../src/slicer/prusa.js';
import { ContractClient } from './contract.js';
import { getJson, type MachineApiUnderTest, postPrint, startMachineApi, waitFor } from './harness.js';
import { MarlinSim } from './sim/marlin.js';
import { cubeStl, expectedCommands, sliceCube } from './usb-fixtures.js';

const PROFILE = new URL('../profiles/creality-ender3.ini', import.meta.url).pathname;

interface JobBody {
  id: string;
  status: string;
  message: string | null;
}

interface MachineBody {
  state: { state: string; message?: string | null };
  progress: number | null;
}

// Generous: the suites of both services share two cores, and a streamed print is thousands of round trips.
describe('printing on a USB printer through POST /print', { timeout: 120_000 }, () => {
  let dir: string;
  let gcode: string;
  let expected: string[];
  let sim: MarlinSim;
  let api: MachineApiUnderTest;
  let client: ContractClient;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'usb-print-'));
    const gcodePath = await sliceCube(dir, 5);
    gcode = await readFile(gcodePath, 'latin1');
    expected = await expectedCommands(gcodePath);
    sim = await MarlinSim.start({ machineType: 'Ender-3', busyEvery: 40 });
    api = await startMachineApi(`
[machines.ender]
type = "Usb"
variant = "Generic"
port = "${sim.hostPath}"
slicer = { type = "Prusa", config = "${PROFILE}" }
nozzle_diameter = 0.4
[[machines.ender.filaments]]
material.type = "pla"
`);
    client = await ContractClient.create(api.baseUrl);
    await waitFor(async () => (await machine()).state.state === 'idle', { what: 'the printer to connect' });
  });

  afterEach(async () => {
    sim.release();
    await waitFor(async () => (await machine()).state.state === 'idle', { what: 'the printer to be idle' });
  });

  afterAll(async () => {
    await api?.close();
    await sim?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const machine = () => getJson<MachineBody>(api.baseUrl, '/machines/ender');
  const job = (id: string) => getJson<JobBody>(api.baseUrl, `/jobs/${id}`);
  const finished = (id: string) =>
    waitFor(
      async () => {
        const current = await job(id);
        return ['completed', 'failed', 'cancelled'].includes(current.status) && current;
      },
      { timeoutMs: 90_000, what: `job ${id} to finish` },
    );

  /**
   * Submits a print; while the previous job is still being wrapped up the service answers 409, so retry;
   * once the previous print has ended, its bed is confirmed clear first.
   */
  async function submit(file: string | Uint8Array, fileName: string): Promise<string> {
    return waitFor(
      async () => {
        const response = await postPrint(api.baseUrl, {
          machineId: 'ender',
          jobName: 'cube',
          file,
          fileName,
        });
        if (response.status === 409) {
          const { error_code } = (await response.json()) as { error_code: string };
          if (error_code === 'MachineNotReady')
            await fetch(`${api.baseUrl}/machines/ender/clear`, { method: 'POST' });
          return false;
        }
        expect(response.status).toBe(200);
        return ((await response.json()) as { job_id: string }).job_id;
      },
      { what: 'the print to be accepted' },
    );
  }

  it('streams uploaded G-code intact, shows progress, and refuses a second print with 409', async () => {
    const from = sim.commands.length;
    sim.holdAtCommand(from + 300);
    const jobId = await submit(gcode, 'cube.gcode');
    await waitFor(() => sim.holding, { what: 'the printer to hold an ok' });
    const running = await machine();
    expect(running.state).toEqual({ state: 'running' });
    expect(running.progress).toBeGreaterThan(0);
    expect(running.progress).toBeLessThan(100);
    const second = await client.request<{ error_code: string }>('POST', '/print', {
      body: printForm(gcode),
    });
    expect(second.status).toBe(409);
    expect(second.body.error_code).toBe('MachineBusy');
    sim.release();
    expect(await finished(jobId)).toMatchObject({ status: 'completed', message: null });
    expect(sim.commands.slice(from)).toEqual(expected);
  });

  it('slices an uploaded STL and streams exactly the slicer’s G-code', async () => {
    const stl = join(dir, 'cube10.stl');
    await writeFile(stl, cubeStl(10));
    // The same slicer, profile and arguments the service uses give the reference G-code.
    const reference = join(dir, 'reference.gcode');
    await new PrusaSlicer({ type: 'Prusa', config: PROFILE }).slice({
      designPath: stl,
      outputPath: reference,
      buildVolume: null,
    });
    const from = sim.commands.length;
    const jobId = await submit(cubeStl(10), 'cube.stl');
    expect(await finished(jobId)).toMatchObject({ status: 'completed', message: null });
    expect(sim.commands.slice(from)).toEqual(await expectedCommands(reference));
  });

  it('pauses, resumes and stops over HTTP; the stop turns heaters and motors off', async () => {
    const from = sim.commands.length;
    sim.holdAtCommand(from + 100);
    const jobId = await submit(gcode, 'cube.gcode');
    await waitFor(() => sim.holding, { what: 'the printer to hold an ok' });
    const paused = await client.request<MachineBody>('POST', '/machines/ender/pause');
    expect(paused.status).toBe(200);
    expect(paused.body.state).toEqual({ state: 'paused' });
    sim.release();
    await waitFor(async () => (await machine()).progress! > paused.body.progress!, {
      what: 'the held line to be acknowledged',
    });
    expect(sim.commands.length).toBe(from + 100);
    sim.holdAtCommand(from + 200);
    const resumed = await client.request<MachineBody>('POST', '/machines/ender/resume');
    expect(resumed.status).toBe(200);
    expect(resumed.body.state).toEqual({ state: 'running' });
    await waitFor(() => sim.holding, { what: 'the printer to hold an ok again' });
    // Paused with nothing in flight, so the stop decides exactly where streaming ends.
    const pausedAgain = await client.request<MachineBody>('POST', '/machines/ender/pause');
    sim.release();
    await waitFor(async () => (await machine()).progress! > pausedAgain.body.progress!, {
      what: 'the second held line to be acknowledged',
    });
    const stopped = await client.request<MachineBody>('POST', '/machines/ender/stop');
    expect(stopped.status).toBe(200);
    expect(stopped.body.state).toEqual({ state: 'idle' });
    expect(await finished(jobId)).toMatchObject({ status: 'cancelled' });
    expect(sim.commands.slice(from)).toEqual([...expected.slice(0, 200), ...SAFE_END_GCODE]);
  });

  it('fails the job with the firmware’s Error: message and reports the printer failed', async () => {
    const from = sim.commands.length;
    sim.failAtCommand(from + 50, 'MINTEMP triggered, system stopped! Heater_ID: bed');
    const jobId = await submit(gcode, 'cube.gcode');
    expect(await finished(jobId)).toMatchObject({
      status: 'failed',
      message: 'MINTEMP triggered, system stopped! Heater_ID: bed',
    });
    expect((await machine()).state).toEqual({
      state: 'failed',
      message: 'MINTEMP triggered, system stopped! Heater_ID: bed',
    });
    const refused = await client.request<{ error_code: string }>('POST', '/print', {
      body: printForm(gcode),
    });
    expect(refused.status).toBe(409);
    sim.reset();
  });
});

function printForm(gcode: string): FormData {
  const form = new FormData();
  form.append('params', JSON.stringify({ machine_id: 'ender', job_name: 'again' }));
  form.append('file', new Blob([gcode]), 'cube.gcode');
  return form;
}
