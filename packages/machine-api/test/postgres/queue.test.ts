/**
 * One queue for the farm (machine-api-postgres project only): two instances on one PostgreSQL database.
 * A job queued on A, whose only match is a (simulated Moonraker) printer driven by B, is accepted by A
 * and printed by B with the design A received; a job A accepted is still printed by B after A has gone
 * (its design is read from the database, not from A's disk); instances racing for jobs claim each once.
 */

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type JobDatabaseHandle, openJobDatabase } from '../../src/jobs/database.js';
import { JobStore } from '../../src/jobs/store.js';
import { getJson, type MachineApiUnderTest, startMachineApi, waitFor } from '../harness.js';
import { MoonrakerSim } from '../sim/moonraker.js';
import { createPostgresDatabase } from '../test-database.js';

interface JobBody {
  id: string;
  machine_id: string | null;
  status: string;
}

let databaseUrl: string;
let sim: MoonrakerSim;
let a: MachineApiUnderTest | undefined;
let b: MachineApiUnderTest;

const SERVER = (instance: string) => `[server]\ninstance = "${instance}"\nheartbeat_timeout_seconds = 1\n`;

function queueForm(params: Record<string, unknown>, gcode: string): FormData {
  const body = new FormData();
  body.append('params', JSON.stringify(params));
  body.append('file', new Blob([gcode]), 'part.gcode');
  return body;
}

/** The G-code files the simulated printer received, by content. */
function received(): string[] {
  return [...sim.files.values()].map((file) => file.toString());
}

beforeAll(async () => {
  databaseUrl = await createPostgresDatabase();
  sim = await MoonrakerSim.start({ autoProgress: { tickMs: 50, step: 0.25 } });
  // B first: A then reads B's machine as it starts.
  b = await startMachineApi(
    `${SERVER('b')}
[machines.b1]
type = "Moonraker"
endpoint = "${sim.endpoint}"
variant = "Generic"
nozzle_diameter = 0.4
timeout_seconds = 5
poll_interval_seconds = 0.2
`,
    { databaseUrl },
  );
  // A drives only a machine the jobs below cannot go to.
  a = await startMachineApi(`${SERVER('a')}\n[machines.a1]\ntype = "Noop"\nmachine_type = "Cnc"\n`, {
    databaseUrl,
  });
});

afterAll(async () => {
  await a?.close();
  await b?.close();
  await sim?.close();
});

describe('one queue across instances', () => {
  it('a job queued on A whose only match is on B is accepted by A and printed by B, with its design', async () => {
    const gcode = `; queued on a\nG28\nG1 X10 Y10 Z0.2 F3000\n`;
    const res = await fetch(`${a?.baseUrl}/queue`, {
      method: 'POST',
      body: queueForm({ job_name: 'from-a', machine_type: 'FusedDeposition' }, gcode),
    });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as JobBody;
    const done = await waitFor(
      async () => {
        const job = await getJson<JobBody>(b.baseUrl, `/jobs/${id}`);
        return job.status === 'completed' && job;
      },
      { what: 'the job to print on b1' },
    );
    expect(done).toMatchObject({ id, machine_id: 'b1', status: 'completed' });
    expect(await getJson<JobBody>(a?.baseUrl ?? '', `/jobs/${id}`)).toMatchObject({
      machine_id: 'b1',
      status: 'completed',
    });
    expect(received()).toContain(gcode);
  });

  it("A's kept GET /queue answer never outlives a change B made (queued, then cancelled)", async () => {
    // b1's bed awaits a clear after the first test's print, so a job for it waits in the queue.
    const names = async () =>
      (await getJson<{ job: { job_name: string } }[]>(a?.baseUrl ?? '', '/queue')).map((e) => e.job.job_name);
    expect(await names()).toEqual([]);
    expect(await names()).toEqual([]); // kept now, under the database's stamp
    const res = await fetch(`${b.baseUrl}/queue`, {
      method: 'POST',
      body: queueForm({ job_name: 'via-b', machine_ids: ['b1'] }, '; waits\nG28\n'),
    });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as JobBody;
    expect(await names()).toEqual(['via-b']);
    expect((await fetch(`${b.baseUrl}/jobs/${id}/cancel`, { method: 'POST' })).status).toBe(200);
    expect(await names()).toEqual([]);
  });

  it('a job A accepted is printed by B after A has gone, its design (several chunks) read from the database', async () => {
    // b1's bed awaits a clear after the print above, so the job waits while A goes away.
    expect(await getJson(b.baseUrl, '/machines/b1')).toMatchObject({ ready: false });
    const line = `G1 X1 Y1 ; ${'x'.repeat(100)}\n`;
    const gcode = `; queued on a, printed after a left\n${line.repeat(Math.ceil((2.5 * 1024 * 1024) / line.length))}`;
    const res = await fetch(`${a?.baseUrl}/queue`, {
      method: 'POST',
      body: queueForm({ job_name: 'orphan', machine_ids: ['b1'] }, gcode),
    });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as JobBody;
    // A stops and its directory (data dir included) is removed.
    await a?.close();
    a = undefined;
    expect((await fetch(`${b.baseUrl}/machines/b1/clear`, { method: 'POST' })).status).toBe(200);
    await waitFor(async () => (await getJson<JobBody>(b.baseUrl, `/jobs/${id}`)).status === 'completed', {
      what: 'the job to print on b1',
    });
    expect(received()).toContain(gcode);
  });
});

describe('claims of instances racing for jobs', () => {
  let first: JobDatabaseHandle;
  let second: JobDatabaseHandle;

  beforeAll(async () => {
    const url = await createPostgresDatabase();
    first = await openJobDatabase({ dataDir: '', url });
    second = await openJobDatabase({ dataDir: '', url });
  });

  afterAll(async () => {
    await first?.close();
    await second?.close();
  });

  async function waitingJobs(count: number): Promise<string[]> {
    const store = new JobStore(first.db, 'postgres');
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const job = await store.insert({
        id: randomUUID(),
        machineId: null,
        jobName: `job-${i}`,
        fileName: 'part.gcode',
        fileSize: 10,
        parameters: { job_name: `job-${i}` },
        queue: { priority: 0, constraints: {} },
      });
      ids.push(job.id);
    }
    return ids;
  }

  it('one job, ten claims from two instances at once: exactly one gets it', async () => {
    const [id] = await waitingJobs(1);
    const stores = [new JobStore(first.db, 'postgres'), new JobStore(second.db, 'postgres')];
    const claims = await Promise.all(
      Array.from({ length: 10 }, (_, i) => stores[i % 2]?.claimFirst([id as string], `m${i}`)),
    );
    const winners = claims.filter((claim) => claim !== undefined);
    expect(winners).toHaveLength(1);
    expect(winners[0]).toMatchObject({ id, status: 'queued' });
  });

  it('twenty jobs, twenty machines on two instances claiming at once: each job is claimed once, none is left', async () => {
    const ids = await waitingJobs(20);
    const stores = [new JobStore(first.db, 'postgres'), new JobStore(second.db, 'postgres')];
    const claims = await Promise.all(
      Array.from({ length: 20 }, (_, i) => stores[i % 2]?.claimFirst(ids, `machine-${i}`)),
    );
    const claimed = claims.map((claim) => claim?.id);
    expect(new Set(claimed).size).toBe(20);
    expect([...claimed].sort()).toEqual([...ids].sort());
    expect(await new JobStore(first.db, 'postgres').waiting()).toEqual([]);
  });
});
