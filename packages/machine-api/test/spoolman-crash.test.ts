/**
 * Spoolman use reports across `kill -9`: the service as an operator runs it sends a report, Spoolman
 * applies it but its answer is held back, and the process is killed before it could record the report as
 * sent. Started again on the same data (in this process), the service finds the report `sending`, sees from the spool's
 * `used_length` that Spoolman applied it, and does not send it again; the next report goes out after it.
 */

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crash, killChildren, serveDirInChild } from './child-service.js';
import { postPrint, startMachineApi, waitFor } from './harness.js';
import { SpoolmanSim } from './sim/spoolman.js';

const GCODE = 'G28\nG1 X10 Y10 E2 F1200\n; filament used [mm] = 4000\n; total filament used [g] = 12\n';

let dir: string;
let sim: SpoolmanSim;

const config = () => `[spoolman]
url = "${sim.url}"
timeout_ms = 60000

[machines.sim]
type = "Noop"
print_seconds = 0
clearing = "auto"
`;

beforeAll(async () => {
  sim = await new SpoolmanSim().start();
  sim.addSpool({ id: 12, remaining: 800 });
  dir = await mkdtemp(join(tmpdir(), 'machine-api-spoolman-crash-'));
  await writeFile(join(dir, 'machine-api.toml'), config());
});

afterAll(async () => {
  killChildren();
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

async function printed(url: string): Promise<void> {
  const response = await postPrint(url, { machineId: 'sim', jobName: 'part', file: GCODE });
  expect(response.status, await response.clone().text()).toBe(200);
  const { job_id } = (await response.json()) as { job_id: string };
  await waitFor(
    async () =>
      ((await (await fetch(`${url}/jobs/${job_id}`)).json()) as { status: string }).status === 'completed',
    { what: 'the print to complete' },
  );
}

describe('Spoolman use reports across kill -9', () => {
  it('a report Spoolman applied before the kill is not sent again; the next one follows it', async () => {
    const dataDir = join(dir, 'data');
    const first = await serveDirInChild(dir, dataDir);
    const assigned = await fetch(`${first.url}/machines/sim/spool`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ spool_id: 12 }),
    });
    expect(assigned.status).toBe(200);
    sim.faults.holdUse = true;
    await printed(first.url);
    await waitFor(() => sim.held.length === 1, { what: 'Spoolman to apply the report and hold its answer' });
    await crash(first);
    sim.faults.holdUse = false;
    sim.releaseHeld();
    expect(sim.uses).toEqual([{ spool: 12, use_length: 4000 }]);

    // Started again in this process (a child's start costs seconds on a loaded machine): same data, same database.
    const second = await startMachineApi(config(), { dir });
    await printed(second.baseUrl);
    await waitFor(() => sim.uses.length >= 2, { timeoutMs: 30_000, what: 'the second report' });
    expect(sim.uses).toEqual([
      { spool: 12, use_length: 4000 },
      { spool: 12, use_length: 4000 },
    ]);
    expect(sim.spools.get(12)?.used_length).toBe(8000);
    await second.close();
  });
});
