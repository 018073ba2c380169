/**
 * Spoolman use reports across `kill -9`: the service as an operator runs it sends a report, Spoolman
 * applies it but its answer is held back, and the process is killed before it could record the report as
 * sent. Started again on the same data (in this process), the service finds the report `sending`, sees from the spool's
 * `used_length` that Spoolman applied it, and does not send it again; the next report goes out after it.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postPrint, startMachineApi, waitFor } from './harness.js';
import { SpoolmanSim } from './sim/spoolman.js';
import { testDatabaseUrl } from './test-database.js';

const cli = new URL('../src/cli.ts', import.meta.url).pathname;
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
const started: ChildProcess[] = [];

beforeAll(async () => {
  sim = await new SpoolmanSim().start();
  sim.addSpool({ id: 12, remaining: 800 });
  dir = await mkdtemp(join(tmpdir(), 'machine-api-spoolman-crash-'));
  await writeFile(join(dir, 'machine-api.toml'), config());
});

afterAll(async () => {
  for (const child of started) child.kill('SIGKILL');
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

async function serve(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const databaseUrl = await testDatabaseUrl(dir);
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      cli,
      'serve',
      '--json',
      '--config',
      join(dir, 'machine-api.toml'),
      '--bind',
      '127.0.0.1:0',
      '--data-dir',
      dataDir,
      ...(databaseUrl ? ['--database-url', databaseUrl] : []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  started.push(child);
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const url = await waitFor(() => /"url":"(http:\/\/[^"]+)"/.exec(output)?.[1], {
    timeoutMs: 60_000,
    what: `the service to listen (output: ${output})`,
  });
  return { child, url };
}

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
    const first = await serve(dataDir);
    const assigned = await fetch(`${first.url}/machines/sim/spool`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ spool_id: 12 }),
    });
    expect(assigned.status).toBe(200);
    sim.faults.holdUse = true;
    await printed(first.url);
    await waitFor(() => sim.held.length === 1, { what: 'Spoolman to apply the report and hold its answer' });
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
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
