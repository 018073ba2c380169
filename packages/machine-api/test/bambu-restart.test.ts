/**
 * Bambu printers print on by themselves while machine-api is down. A run killed with `kill -9` (a real
 * child process) left three prints on three printers: one goes on printing, one finished meanwhile, and
 * on the third someone started another job from the printer's screen. The next run finds each again in
 * its printer's first report: the first is followed live to how it ends (here the printer fails it), the
 * second is completed, the third fails with a message, since its printer no longer reports it.
 */

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crash, killChildren, serveDirInChild } from './child-service.js';
import { getJson, type MachineApiUnderTest, postPrint, startMachineApi, waitFor } from './harness.js';
import { BambuPrinterSim } from './sim/bambu.js';

const GCODE = ';LAYER_CHANGE\nG28\nG1 Z0.2 F600\n;LAYER_CHANGE\nG1 Z0.4\nG1 X20 Y20 E1\n';

interface JobAnswer {
  status: string;
  message: string | null;
}

let dir: string;
const sims: BambuPrinterSim[] = [];
let again: MachineApiUnderTest | undefined;
let toml: string;

beforeAll(async () => {
  // Prints that never end by themselves: the test decides how each one ends.
  for (const i of [1, 2, 3]) {
    sims.push(
      await BambuPrinterSim.start({ serial: `00M09A35010000${i}`, name: `X1C ${i}`, printTicks: 100_000 }),
    );
  }
  dir = await mkdtemp(join(tmpdir(), 'machine-api-bambu-restart-'));
  toml = sims.map((sim, i) => sim.machineToml(`x1c${i + 1}`)).join('');
  await writeFile(join(dir, 'machine-api.toml'), toml);
});

afterAll(async () => {
  killChildren();
  await again?.close();
  await Promise.all(sims.map((sim) => sim.close()));
  await rm(dir, { recursive: true, force: true });
});

async function startPrint(baseUrl: string, machineId: string, sim: BambuPrinterSim): Promise<string> {
  await waitFor(
    async () =>
      (await getJson<{ state: { state: string } }>(baseUrl, `/machines/${machineId}`)).state.state === 'idle',
    { what: `${machineId} idle` },
  );
  const response = await postPrint(baseUrl, { machineId, jobName: `part ${machineId}`, file: GCODE });
  expect(response.status).toBe(200);
  const { job_id: id } = (await response.json()) as { job_id: string };
  await waitFor(async () => (await getJson<JobAnswer>(baseUrl, `/jobs/${id}`)).status === 'printing', {
    what: 'the job to be printing',
  });
  await waitFor(() => sim.status.gcode_state === 'RUNNING', { what: `${machineId} running the job` });
  return id;
}

async function finalJob(baseUrl: string, id: string): Promise<JobAnswer> {
  return waitFor(
    async () => {
      const job = await getJson<JobAnswer>(baseUrl, `/jobs/${id}`);
      return ['completed', 'failed', 'cancelled'].includes(job.status) && job;
    },
    { what: `job ${id} to end` },
  );
}

describe('prints a killed run left on Bambu printers', () => {
  // Starting the service as its own process takes seconds on a loaded machine.
  it('are followed again by the next run: still printing, ended meanwhile, or forgotten at the printer', {
    timeout: 90_000,
  }, async () => {
    const [printing, finishing, replaced] = sims as [BambuPrinterSim, BambuPrinterSim, BambuPrinterSim];
    const first = await serveDirInChild(dir);
    const { url } = first;
    const live = await startPrint(url, 'x1c1', printing);
    const done = await startPrint(url, 'x1c2', finishing);
    const forgotten = await startPrint(url, 'x1c3', replaced);
    await crash(first);

    // While machine-api is down: x1c2 finishes its print; at x1c3 someone starts another from the screen.
    finishing.update({ gcode_state: 'FINISH', mc_percent: 100, stg_cur: -1 });
    replaced.startLocalJob('spare knob');

    again = await startMachineApi(toml, { dir });
    const base = again.baseUrl;
    expect(await finalJob(base, done)).toEqual(
      expect.objectContaining({ status: 'completed', message: null }),
    );
    expect(await finalJob(base, forgotten)).toEqual(
      expect.objectContaining({
        status: 'failed',
        message:
          'machine-api stopped while the job was printing, and "x1c3" no longer reports it; what the machine did afterwards is unknown',
      }),
    );

    // x1c1 still prints the job, followed live: it is printing until the printer fails it.
    await waitFor(
      async () =>
        (await getJson<{ state: { state: string } }>(base, '/machines/x1c1')).state.state === 'running',
      { what: 'x1c1 reported running to the new run' },
    );
    expect(await getJson<JobAnswer>(base, `/jobs/${live}`)).toMatchObject({ status: 'printing' });
    printing.faults.failAtPercent = 0;
    expect(await finalJob(base, live)).toEqual(
      expect.objectContaining({
        status: 'failed',
        message: 'the printer reported the print FAILED (error 0700-8011)',
      }),
    );
    // Every bed awaits a confirmation (the default clearing): no machine takes a new job unasked.
    for (const id of ['x1c1', 'x1c2', 'x1c3']) {
      expect(await getJson(base, `/machines/${id}`)).toMatchObject({ ready: false });
    }
  });
});
