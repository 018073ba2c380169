/**
 * Klipper printers print on by themselves while machine-api is down. A run killed with `kill -9` (a real
 * child process) left two prints on two printers: one printer finished its print meanwhile, on the other
 * someone cancelled it and cleared the file at the printer. The next run follows both again: the first
 * job is completed (its outcome was still on the printer), the second is failed with a message, since
 * its printer no longer knows it. (A print still running is followed to its end: cameras-photos-restart.)
 */

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crash, killChildren, serveDirInChild } from './child-service.js';
import { getJson, type MachineApiUnderTest, postPrint, startMachineApi, waitFor } from './harness.js';
import { MoonrakerSim } from './sim/moonraker.js';

interface JobAnswer {
  status: string;
  message: string | null;
}

let dir: string;
let finished: MoonrakerSim;
let cleared: MoonrakerSim;
let again: MachineApiUnderTest | undefined;
let toml: string;

beforeAll(async () => {
  finished = await MoonrakerSim.start();
  cleared = await MoonrakerSim.start();
  dir = await mkdtemp(join(tmpdir(), 'machine-api-moonraker-restart-'));
  toml = [finished, cleared]
    .map(
      (sim, i) => `
[machines.voron${i + 1}]
type = "Moonraker"
endpoint = "${sim.endpoint}"
variant = "Generic"
poll_interval_seconds = 0.2
`,
    )
    .join('');
  await writeFile(join(dir, 'machine-api.toml'), toml);
});

afterAll(async () => {
  killChildren();
  await again?.close();
  await finished?.close();
  await cleared?.close();
  await rm(dir, { recursive: true, force: true });
});

async function startPrint(baseUrl: string, machineId: string): Promise<string> {
  const response = await postPrint(baseUrl, { machineId, jobName: 'benchy', file: 'G28\nG1 X10\n' });
  expect(response.status).toBe(200);
  const { job_id: id } = (await response.json()) as { job_id: string };
  await waitFor(async () => (await getJson<JobAnswer>(baseUrl, `/jobs/${id}`)).status === 'printing', {
    what: 'the job to be printing',
  });
  return id;
}

describe('prints a killed run left on Klipper printers', () => {
  // Starting the service as its own process takes seconds on a loaded machine.
  it('are followed again by the next run: a print that ended meanwhile is recorded as it ended, one the printer forgot fails', {
    timeout: 90_000,
  }, async () => {
    const first = await serveDirInChild(dir);
    const { url } = first;
    const done = await startPrint(url, 'voron1');
    const forgotten = await startPrint(url, 'voron2');
    await crash(first);

    // While machine-api is down: voron1 finishes; at voron2, someone cancels and clears the print.
    finished.advance(1);
    for (const path of ['/printer/print/cancel', '/printer/gcode/script?script=SDCARD_RESET_FILE']) {
      expect((await fetch(`${cleared.endpoint}${path}`, { method: 'POST' })).status).toBe(200);
    }

    again = await startMachineApi(toml, { dir });
    const base = again.baseUrl;
    await waitFor(async () => (await getJson<JobAnswer>(base, `/jobs/${done}`)).status === 'completed', {
      what: 'the finished print to be recorded',
    });
    const failed = await waitFor(
      async () => {
        const job = await getJson<JobAnswer>(base, `/jobs/${forgotten}`);
        return job.status === 'failed' && job;
      },
      { what: 'the forgotten print to fail' },
    );
    expect(failed.message).toBe(
      'machine-api stopped while the job was printing, and "voron2" no longer reports it; what the machine did afterwards is unknown',
    );
    // Both beds await a confirmation (the default clearing): neither machine takes a new job unasked.
    for (const id of ['voron1', 'voron2']) {
      expect(await getJson(base, `/machines/${id}`)).toMatchObject({ ready: false });
    }
  });
});
