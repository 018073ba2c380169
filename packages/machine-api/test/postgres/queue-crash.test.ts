/**
 * An instance killed during a dispatch (machine-api-postgres project only): B runs as its own process,
 * as an operator runs it, and is killed with SIGKILL after it claimed a job queued on A for its
 * (simulated Moonraker) printer but before the printer had it. A puts the job back in the queue within
 * the heartbeat timeout; B started again prints it, once: the job is neither lost nor printed twice.
 */

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildService, crash, killChildren, serveInChild } from '../child-service.js';
import { getJson, type MachineApiUnderTest, startMachineApi, waitFor } from '../harness.js';
import { MoonrakerSim } from '../sim/moonraker.js';
import { createPostgresDatabase } from '../test-database.js';

interface JobBody {
  id: string;
  machine_id: string | null;
  status: string;
}

/** B's configuration: its printer answers slowly during the dispatch below, so its timeouts are long. */
function bConfig(): string {
  return `[server]
instance = "b"
heartbeat_timeout_seconds = 1
status_timeout_ms = 30000

[machines.b1]
type = "Moonraker"
endpoint = "${sim.endpoint}"
variant = "Generic"
nozzle_diameter = 0.4
timeout_seconds = 30
poll_interval_seconds = 0.2
`;
}

let databaseUrl: string;
let dir: string;
let sim: MoonrakerSim;
let a: MachineApiUnderTest;

beforeAll(async () => {
  databaseUrl = await createPostgresDatabase();
  dir = await mkdtemp(join(tmpdir(), 'machine-api-queue-crash-'));
  sim = await MoonrakerSim.start({ autoProgress: { tickMs: 50, step: 0.25 } });
  await writeFile(join(dir, 'b.toml'), bConfig());
  a = await startMachineApi(
    '[server]\ninstance = "a"\nheartbeat_timeout_seconds = 1\n[machines.a1]\ntype = "Noop"\nmachine_type = "Cnc"\n',
    { databaseUrl },
  );
});

afterAll(async () => {
  killChildren();
  await a?.close();
  await sim?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Starts B as its own process; resolves with its URL once its printer reads ready. */
async function serveB(): Promise<ChildService> {
  const { child, url } = await serveInChild({
    config: join(dir, 'b.toml'),
    dataDir: join(dir, 'b-data'),
    databaseUrl,
  });
  await waitFor(async () => (await getJson<{ ready: boolean }>(url, '/machines/b1')).ready, {
    what: 'b1 to read ready',
  });
  return { child, url };
}

function printStarts(): number {
  return sim.requests.filter((request) => request.path === '/printer/print/start').length;
}

describe('an instance killed during a dispatch', () => {
  // Starting B as its own process takes seconds on a loaded machine; the rest of the test about three.
  it('neither loses the job it had claimed nor prints it twice', { timeout: 90_000 }, async () => {
    const first = await serveB();
    // A admits a job only for a machine it knows of: b1 reaches A's farm mirror within about a second.
    await waitFor(
      async () => {
        const res = await fetch(`${a.baseUrl}/machines/b1`);
        await res.arrayBuffer();
        return res.status === 200;
      },
      { what: "b1 in a's farm mirror" },
    );
    // From now on b1 answers after 20 s: B's dispatch stops at its last look at the printer, after the claim.
    sim.faults.delayMs = 20_000;
    const gcode = '; claimed by b, then b was killed\nG28\nG1 X10 Y10 Z0.2 F3000\n';
    const body = new FormData();
    body.append('params', JSON.stringify({ job_name: 'survivor', machine_ids: ['b1'] }));
    body.append('file', new Blob([gcode]), 'part.gcode');
    const res = await fetch(`${a.baseUrl}/queue`, { method: 'POST', body });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as JobBody;
    await waitFor(async () => (await getJson<JobBody>(a.baseUrl, `/jobs/${id}`)).machine_id === 'b1', {
      what: 'b to claim the job',
    });
    await crash(first);
    sim.faults.delayMs = 0;
    // A finds B dead (heartbeat older than 1 s) and puts the job back at its place.
    const returned = await waitFor(
      async () => {
        const job = await getJson<JobBody>(a.baseUrl, `/jobs/${id}`);
        return job.machine_id === null && job;
      },
      { what: 'a to return the job to the queue' },
    );
    expect(returned).toMatchObject({ id, status: 'queued', machine_id: null });
    expect(printStarts()).toBe(0);

    // B again (the same instance, restarted; in this process, which starts faster): it prints the job, once.
    const second = await startMachineApi(bConfig(), { databaseUrl });
    await waitFor(async () => (await getJson<JobBody>(a.baseUrl, `/jobs/${id}`)).status === 'completed', {
      what: 'the job to print on b1',
    });
    expect(printStarts()).toBe(1);
    expect([...sim.files.values()].map((file) => file.toString())).toEqual([gcode]);
    await second.close();
  });
});
