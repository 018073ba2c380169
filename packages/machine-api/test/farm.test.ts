/**
 * The print farm over HTTP against Noop machines: the queue (constraints, priority, dispatch on `ready`,
 * one job per machine), the bed-cleared confirmation, changes to waiting jobs, requeue, persistence across
 * a restart, and the queue metrics.
 */

import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openJobDatabase } from '../src/jobs/database.js';
import { JobStore } from '../src/jobs/store.js';
import { ContractClient } from './contract.js';
import { asciiStl, cube } from './design-fixtures.js';
import { getJson, type MachineApiUnderTest, postPrint, startMachineApi, waitFor } from './harness.js';

const GCODE = 'G28 ; home\nG1 X10 Y10 Z0.2 F3000\nG1 X20 E1\n';

/** The jobs whose designs the database keeps (queued designs live there, in chunks). */
async function keptDesignJobs(api: MachineApiUnderTest): Promise<string[]> {
  const database = await openJobDatabase({ dataDir: api.dataDir, url: api.databaseUrl });
  try {
    const rows = await database.db.selectFrom('queue_design_chunks').select('job_id').distinct().execute();
    return rows.map((row) => row.job_id);
  } finally {
    await database.close();
  }
}

interface JobBody {
  id: string;
  machine_id: string | null;
  job_name: string;
  status: string;
  message: string | null;
  priority: number;
  position: number | null;
  progress: number | null;
  constraints: Record<string, unknown> | null;
  queued_at: string | null;
  dispatched_at: string | null;
}

interface QueueEntryBody {
  job: JobBody;
  machines: string[];
}

interface MachineBody {
  state: { state: string };
  ready: boolean;
  awaiting_clear_since: string | null;
}

function queueForm(
  params: Record<string, unknown>,
  file: string | Uint8Array = GCODE,
  fileName = 'part.gcode',
) {
  const body = new FormData();
  body.append('params', JSON.stringify(params));
  body.append('file', new Blob([file]), fileName);
  return body;
}

const FARM = `
[server]
status_timeout_ms = 500

[machines.pla-box]
type = "Noop"
print_seconds = 0.3
nozzle_diameter = 0.4
filaments = [{ material = { type = "pla" } }]
loaded_filament_idx = 0

[machines.petg-box]
type = "Noop"
print_seconds = 0.3
nozzle_diameter = 0.4
filaments = [{ material = { type = "petg" } }]
loaded_filament_idx = 0

[machines.slow-box]
type = "Noop"
print_seconds = 600
nozzle_diameter = 0.6
`;

describe('the farm queue', () => {
  let api: MachineApiUnderTest;
  let client: ContractClient;
  beforeAll(async () => {
    api = await startMachineApi(FARM);
    client = await ContractClient.create(api.baseUrl);
  });
  afterAll(() => api.close());

  const job = (id: string) => getJson<JobBody>(api.baseUrl, `/jobs/${id}`);
  const machine = (id: string) => getJson<MachineBody>(api.baseUrl, `/machines/${id}`);
  const queue = (params: Record<string, unknown>, file?: string | Uint8Array, fileName?: string) =>
    client.request<JobBody>('POST', '/queue', { body: queueForm(params, file, fileName) });
  const reaches = (id: string, status: string) =>
    waitFor(
      async () => {
        const body = await job(id);
        return body.status === status && body;
      },
      { what: `job ${id} ${status}` },
    );
  const clear = (id: string) => client.request<MachineBody>('POST', `/machines/${id}/clear`);
  /** Prints directly and waits for the end, so the machine's bed then awaits a confirmation. */
  async function occupy(id: string) {
    const res = await postPrint(api.baseUrl, { machineId: id, jobName: 'occupant', file: GCODE });
    expect(res.status).toBe(200);
    await reaches(((await res.json()) as { job_id: string }).job_id, 'completed');
    expect(await machine(id)).toMatchObject({ ready: false, awaiting_clear_since: expect.any(String) });
  }

  it('dispatches three jobs over two machines with different materials in priority order, with bed confirmations in between', async () => {
    await occupy('pla-box');
    await occupy('petg-box');

    const oldPla = await queue({ job_name: 'old pla', material: 'pla' });
    expect(oldPla.status).toBe(201);
    expect(oldPla.body).toMatchObject({
      machine_id: null,
      job_name: 'old pla',
      status: 'queued',
      position: 1,
      priority: 0,
      progress: null,
      constraints: { material: 'pla' },
      queued_at: expect.any(String),
      dispatched_at: null,
    });
    const urgentPla = await queue({ job_name: 'urgent pla', material: 'pla', priority: 5 });
    const petg = await queue({ job_name: 'petg part', material: 'petg', priority: 1 });
    expect(urgentPla.body.position).toBe(1);
    expect(petg.body.position).toBe(2);

    const listed = await client.request<QueueEntryBody[]>('GET', '/queue');
    expect(listed.status).toBe(200);
    expect(listed.body.map((entry) => [entry.job.job_name, entry.job.position, entry.machines])).toEqual([
      ['urgent pla', 1, ['pla-box']],
      ['petg part', 2, ['petg-box']],
      ['old pla', 3, ['pla-box']],
    ]);

    // Nothing moves while the beds hold the previous parts.
    expect((await job(oldPla.body.id)).status).toBe('queued');

    const cleared = await clear('pla-box');
    expect(cleared.status).toBe(200);
    const urgent = await reaches(urgentPla.body.id, 'completed');
    expect(urgent).toMatchObject({ machine_id: 'pla-box', progress: 100, position: null });
    // The older pla job still waits: the bed is not confirmed clear yet.
    expect(await job(oldPla.body.id)).toMatchObject({ status: 'queued', machine_id: null, position: 2 });
    expect(await machine('pla-box')).toMatchObject({ state: { state: 'idle' }, ready: false });

    expect((await clear('petg-box')).status).toBe(200);
    const petgDone = await reaches(petg.body.id, 'completed');
    expect(petgDone.machine_id).toBe('petg-box');
    expect(await job(oldPla.body.id)).toMatchObject({ status: 'queued', position: 1 });

    expect((await clear('pla-box')).status).toBe(200);
    const old = await reaches(oldPla.body.id, 'completed');
    expect(old.machine_id).toBe('pla-box');
    expect(Date.parse(urgent.dispatched_at!)).toBeLessThan(Date.parse(old.dispatched_at!));
    expect((await client.request<QueueEntryBody[]>('GET', '/queue')).body).toEqual([]);
    await clear('pla-box');
    await clear('petg-box');
  });

  it('refuses at submission, with 400, a job no configured machine could ever take', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [
        { job_name: 'x', material: 'tpu' },
        'no configured machine could ever take this job: "petg-box" has petg loaded, not tpu; "pla-box" has pla loaded, not tpu; "slow-box" has no filament loaded, not tpu',
      ],
      [
        { job_name: 'x', machine_ids: ['ghost'] },
        'no configured machine could ever take this job: no machine with id "ghost"',
      ],
      [
        { job_name: 'x', machine_type: 'Cnc' },
        'no configured machine could ever take this job: "petg-box" is FusedDeposition, not Cnc; "pla-box" is FusedDeposition, not Cnc; "slow-box" is FusedDeposition, not Cnc',
      ],
      [
        { job_name: 'x', nozzle_diameter: 0.6, machine_ids: ['pla-box'] },
        'no configured machine could ever take this job: "pla-box" has a 0.4 mm nozzle, not 0.6 mm',
      ],
    ];
    for (const [params, message] of cases) {
      const res = await queue(params);
      expect(res.status, JSON.stringify(params)).toBe(400);
      expect(res.body).toMatchObject({ error_code: 'BadRequest', message });
    }
    // What a machine can print (a mesh on a machine without a slicer) is tested in design-types.test.ts.
    // Invalid parameters are refused without coercion.
    for (const params of [{ job_name: 'x', priority: '5' }, { job_name: 'x', material: 'wood' }, {}]) {
      const res = await queue(params);
      expect(res.status, JSON.stringify(params)).toBe(400);
      expect(res.body).toMatchObject({ error_code: 'BadRequest' });
    }
    expect((await client.request<QueueEntryBody[]>('GET', '/queue')).body).toEqual([]);
    expect(await keptDesignJobs(api)).toEqual([]);
    expect(await readdir(join(api.dataDir, 'uploads'))).toEqual([]);
  });

  it('changes priority and constraints of a waiting job, cancels it, and refuses changes to other jobs', async () => {
    await occupy('pla-box');
    const a = await queue({ job_name: 'a', machine_ids: ['pla-box'] });
    const b = await queue({ job_name: 'b', machine_ids: ['pla-box'] });
    expect(b.body.position).toBe(2);
    const raised = await client.request<JobBody>('PATCH', `/jobs/${b.body.id}`, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ priority: 10 }),
    });
    expect(raised.status).toBe(200);
    expect(raised.body).toMatchObject({ priority: 10, position: 1 });
    expect((await job(a.body.id)).position).toBe(2);

    const impossible = await client.request('PATCH', `/jobs/${a.body.id}`, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ constraints: { material: 'nylon' } }),
    });
    expect(impossible.status).toBe(400);
    expect(impossible.body).toMatchObject({ error_code: 'BadRequest' });
    const badType = await client.request('PATCH', `/jobs/${a.body.id}`, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ priority: 'high' }),
    });
    expect(badType.status).toBe(400);
    const moved = await client.request<JobBody>('PATCH', `/jobs/${a.body.id}`, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ constraints: { material: 'petg' } }),
    });
    expect(moved.status).toBe(200);
    expect(moved.body.constraints).toEqual({ material: 'petg' });
    // petg-box is ready: the job goes there at once.
    const onPetg = await reaches(a.body.id, 'completed');
    expect(onPetg.machine_id).toBe('petg-box');
    const late = await client.request('PATCH', `/jobs/${a.body.id}`, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ priority: 1 }),
    });
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({
      error_code: 'Conflict',
      message: `job ${a.body.id} is completed on "petg-box"; only a job waiting in the queue can be changed`,
    });

    const cancelled = await client.request<JobBody>('POST', `/jobs/${b.body.id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({
      status: 'cancelled',
      machine_id: null,
      position: null,
      message: 'cancelled by request while waiting in the queue',
    });
    expect((await client.request<QueueEntryBody[]>('GET', '/queue')).body).toEqual([]);
    await clear('pla-box');
    await clear('petg-box');
  });

  it('leaves a failed or cancelled job failed; POST /jobs/{id}/requeue puts it back', async () => {
    const slow = await queue({ job_name: 'slow', machine_ids: ['slow-box'] });
    await reaches(slow.body.id, 'printing');
    const stopped = await client.request<JobBody>('POST', `/jobs/${slow.body.id}/cancel`);
    expect(stopped.body.status).toBe('cancelled');
    // Not silently retried: it stays cancelled, and the machine waits for its bed to be confirmed.
    expect(await job(slow.body.id)).toMatchObject({ status: 'cancelled', machine_id: 'slow-box' });
    expect((await machine('slow-box')).ready).toBe(false);

    const requeued = await client.request<JobBody>('POST', `/jobs/${slow.body.id}/requeue`);
    expect(requeued.status).toBe(200);
    expect(requeued.body).toMatchObject({ status: 'queued', machine_id: null, message: null, position: 1 });
    expect((await clear('slow-box')).status).toBe(200);
    expect((await reaches(slow.body.id, 'printing')).machine_id).toBe('slow-box');
    // Clearing a machine that prints is refused.
    const busy = await clear('slow-box');
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({ error_code: 'MachineBusy' });

    const running = await client.request('POST', `/jobs/${slow.body.id}/requeue`);
    expect(running.status).toBe(409);
    expect(running.body).toMatchObject({
      error_code: 'Conflict',
      message: `job ${slow.body.id} is printing; only a failed or cancelled job can be requeued`,
    });
    expect((await client.request('POST', '/jobs/3f1c6d2e-0000-4000-8000-000000000000/requeue')).status).toBe(
      404,
    );
    expect((await client.request<JobBody>('POST', `/jobs/${slow.body.id}/cancel`)).body.status).toBe(
      'cancelled',
    );
    expect((await clear('slow-box')).status).toBe(200);
    expect((await clear('nowhere')).status).toBe(404);
  });

  it('exports queue depth, wait times and dispatches by machine', async () => {
    const text = await (await fetch(`${api.baseUrl}/metrics`)).text();
    expect(text).toContain('machine_api_queue_depth 0');
    expect(text).toMatch(/machine_api_queue_dispatches_total\{machine="pla-box"\} [1-9]/);
    expect(text).toMatch(/machine_api_queue_dispatches_total\{machine="petg-box"\} [1-9]/);
    expect(text).toMatch(/machine_api_queue_wait_seconds_count [1-9]/);
  });
});

describe('a design larger than every build volume', () => {
  it('is refused at submission with 400, naming the build volume', async () => {
    const profile = fileURLToPath(new URL('../profiles/generic-fdm-0.4.ini', import.meta.url));
    const api = await startMachineApi(
      `[machines.small]\ntype = "Noop"\nslicer = { type = "Prusa", config = "${profile}" }\nmax_part_volume = { width = 100, depth = 100, height = 100 }\n`,
    );
    try {
      const body = queueForm({ job_name: 'huge' }, asciiStl(cube(150)), 'huge.stl');
      const res = await fetch(`${api.baseUrl}/queue`, { method: 'POST', body });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        error_code: 'BadRequest',
        message:
          'no configured machine could ever take this job: "small" has a build volume of 100 × 100 × 100 mm, smaller than the design (150 × 150 × 150 mm, width × depth × height)',
      });
      const fits = await fetch(`${api.baseUrl}/queue`, {
        method: 'POST',
        body: queueForm({ job_name: 'fits', priority: 1 }, asciiStl(cube(50)), 'fits.stl'),
      });
      expect(fits.status).toBe(201);
    } finally {
      await api.close();
    }
  });
});

describe('a failed machine', () => {
  it('refuses clear with 409 MachineRejected quoting the failure', async () => {
    const api = await startMachineApi(
      '[machines.jam]\ntype = "Noop"\nstate = { state = "failed", message = "nozzle clog" }\n',
    );
    try {
      const client = await ContractClient.create(api.baseUrl);
      const res = await client.request('POST', '/machines/jam/clear');
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({
        error_code: 'MachineRejected',
        message:
          'machine "jam" reports a failure: nozzle clog; fix it at the machine before confirming the bed clear',
      });
    } finally {
      await api.close();
    }
  });
});

describe('the queue survives a restart', () => {
  it('keeps waiting jobs (a claimed one not yet started too) and their designs, and dispatches them afterwards', async () => {
    const config = '[machines.solo]\ntype = "Noop"\nprint_seconds = 0.2\n';
    const first = await startMachineApi(config);
    let second: MachineApiUnderTest | undefined;
    try {
      const occupant = await postPrint(first.baseUrl, {
        machineId: 'solo',
        jobName: 'occupant',
        file: GCODE,
      });
      const { job_id } = (await occupant.json()) as { job_id: string };
      await waitFor(
        async () => (await getJson<JobBody>(first.baseUrl, `/jobs/${job_id}`)).status === 'completed',
      );
      const ids: string[] = [];
      for (const name of ['first', 'second']) {
        const res = await fetch(`${first.baseUrl}/queue`, {
          method: 'POST',
          body: queueForm({ job_name: name }),
        });
        expect(res.status).toBe(201);
        ids.push(((await res.json()) as JobBody).id);
      }
      await first.service.close();
      // As if the run had stopped between claiming the first job for solo and handing it over: a claimed,
      // never-started job goes back to its place in the queue (it is neither lost nor failed).
      const database = await openJobDatabase({ dataDir: first.dataDir, url: first.databaseUrl });
      expect(await new JobStore(database.db).claim(ids[0] as string, 'solo')).toMatchObject({
        machineId: 'solo',
      });
      await database.close();

      second = await startMachineApi(config, { dir: first.dir });
      const client = await ContractClient.create(second.baseUrl);
      const listed = await client.request<QueueEntryBody[]>('GET', '/queue');
      expect(listed.body.map((entry) => [entry.job.id, entry.job.position, entry.machines])).toEqual([
        [ids[0], 1, ['solo']],
        [ids[1], 2, ['solo']],
      ]);
      expect((await keptDesignJobs(second)).sort()).toEqual([...ids].sort());
      // The bed confirmation survived too: nothing was dispatched yet.
      expect(await getJson(second.baseUrl, '/machines/solo')).toMatchObject({ ready: false });
      expect((await client.request('POST', '/machines/solo/clear')).status).toBe(200);
      const base = second.baseUrl;
      await waitFor(async () => (await getJson<JobBody>(base, `/jobs/${ids[0]}`)).status === 'completed');
      expect((await getJson<JobBody>(base, `/jobs/${ids[1]}`)).status).toBe('queued');
      expect((await client.request('POST', '/machines/solo/clear')).status).toBe(200);
      await waitFor(async () => (await getJson<JobBody>(base, `/jobs/${ids[1]}`)).status === 'completed');
      // Completed jobs' designs are removed.
      expect(await keptDesignJobs(second)).toEqual([]);
    } finally {
      await second?.close();
      await first.close().catch(() => undefined);
    }
  });
});

describe('designs queued by an earlier version', () => {
  it('a waiting job whose design an earlier version kept on disk moves to the database at start and prints', async () => {
    const config = '[machines.solo]\ntype = "Noop"\nprint_seconds = 0.1\n';
    const first = await startMachineApi(config);
    let second: MachineApiUnderTest | undefined;
    try {
      // A print first, so that the bed awaits a clear and the queued job waits.
      const occupant = await postPrint(first.baseUrl, {
        machineId: 'solo',
        jobName: 'occupant',
        file: GCODE,
      });
      const { job_id } = (await occupant.json()) as { job_id: string };
      await waitFor(
        async () => (await getJson<JobBody>(first.baseUrl, `/jobs/${job_id}`)).status === 'completed',
      );
      const res = await fetch(`${first.baseUrl}/queue`, {
        method: 'POST',
        body: queueForm({ job_name: 'old', machine_ids: ['solo'] }),
      });
      expect(res.status).toBe(201);
      const { id } = (await res.json()) as JobBody;
      await first.service.close();
      // What the earlier version left: the design as a file under <dataDir>/queue, its path in the row.
      const database = await openJobDatabase({ dataDir: first.dataDir, url: first.databaseUrl });
      const legacy = join(first.dataDir, 'queue', `${id}.gcode`);
      await mkdir(join(first.dataDir, 'queue'), { recursive: true });
      await writeFile(legacy, GCODE);
      await database.db.deleteFrom('queue_design_chunks').execute();
      await database.db.updateTable('jobs').set({ design_path: legacy }).where('id', '=', id).execute();
      await database.close();

      second = await startMachineApi(config, { dir: first.dir });
      expect(await keptDesignJobs(second)).toEqual([id]);
      await expect(readdir(join(second.dataDir, 'queue'))).rejects.toThrow('ENOENT');
      const base = second.baseUrl;
      expect((await fetch(`${base}/machines/solo/clear`, { method: 'POST' })).status).toBe(200);
      await waitFor(async () => (await getJson<JobBody>(base, `/jobs/${id}`)).status === 'completed');
    } finally {
      await second?.close();
      await first.close().catch(() => undefined);
    }
  });
});
