import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openJobDatabase } from '../src/jobs/database.js';
import { JobStore } from '../src/jobs/store.js';
import { ContractClient } from './contract.js';
import { getJson, type MachineApiUnderTest, postPrint, startMachineApi, waitFor } from './harness.js';
import { testDatabaseUrl } from './test-database.js';

const CONFIG = `
[server]
max_upload_mib = 1
status_timeout_ms = 300

[machines.quick]
type = "Noop"
print_seconds = 0.2
filaments = [{ material = { type = "pla" } }]

[machines.long]
type = "Noop"
print_seconds = 600

[machines.racer]
type = "Noop"
print_seconds = 600

[machines.working]
type = "Noop"
state.state = "running"

[machines.gone]
type = "Noop"
status_delay_ms = 60000

[machines.jammed]
type = "Noop"
state = { state = "failed", message = "filament jam" }
`;

const GCODE = 'G28 ; home\nG1 X10 Y10 Z0.2 F3000\nG1 X20 E1\nM104 S0\n';

interface JobBody {
  id: string;
  machine_id: string;
  job_name: string;
  file_name: string;
  file_size: number;
  status: string;
  message: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

function form(parts: {
  params?: string;
  file?: string | Uint8Array;
  fileName?: string;
  extra?: [string, string][];
}) {
  const body = new FormData();
  if (parts.params !== undefined) body.append('params', parts.params);
  if (parts.file !== undefined) body.append('file', new Blob([parts.file]), parts.fileName ?? 'cube.gcode');
  for (const [name, value] of parts.extra ?? []) body.append(name, value);
  return body;
}

const params = (machineId: string, jobName = 'cube') =>
  JSON.stringify({ machine_id: machineId, job_name: jobName });

describe('POST /print and the job lifecycle', () => {
  let api: MachineApiUnderTest;
  let client: ContractClient;
  beforeAll(async () => {
    api = await startMachineApi(CONFIG);
    client = await ContractClient.create(api.baseUrl);
  });
  afterAll(() => api.close());

  const uploadsLeft = () => readdir(join(api.dataDir, 'uploads'));
  const workDirsLeft = () => readdir(join(api.dataDir, 'jobs'));
  const job = (id: string) => getJson<JobBody>(api.baseUrl, `/jobs/${id}`);
  const print = (body: FormData) =>
    client.request<{ job_id: string; parameters: unknown }>('POST', '/print', { body });

  it('accepts a G-code print, echoes the parameters, and runs the job to completed', async () => {
    const res = await print(
      form({ params: params('quick', 'benchy'), file: GCODE, fileName: 'benchy.gcode' }),
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      job_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      parameters: { machine_id: 'quick', job_name: 'benchy' },
    });
    const done = await waitFor(async () => {
      const current = await job(res.body.job_id);
      return current.status === 'completed' && current;
    });
    expect(done).toEqual({
      id: res.body.job_id,
      machine_id: 'quick',
      job_name: 'benchy',
      file_name: 'benchy.gcode',
      file_size: Buffer.byteLength(GCODE),
      status: 'completed',
      message: null,
      estimate: null,
      filament: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      finished_at: expect.any(String),
      progress: 100,
      priority: 0,
      position: null,
      constraints: null,
      queued_at: null,
      dispatched_at: null,
    });
    expect(Date.parse(done.finished_at!)).toBeGreaterThanOrEqual(Date.parse(done.created_at));
    // By the time a job reads as final, its files are gone; the machine is idle but its bed holds the part.
    expect(await workDirsLeft()).toEqual([]);
    expect(await uploadsLeft()).toEqual([]);
    const machine = await client.request<{ awaiting_clear_since: string }>('GET', '/machines/quick');
    expect(machine.body).toMatchObject({
      state: { state: 'idle' },
      progress: null,
      ready: false,
      awaiting_clear_since: expect.any(String),
    });
    const refused = await print(form({ params: params('quick', 'benchy 2'), file: GCODE }));
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      error_code: 'MachineNotReady',
      message: `machine "quick" has had a print on its bed since ${machine.body.awaiting_clear_since}: remove it, then confirm with POST /machines/quick/clear`,
    });
    const cleared = await client.request('POST', '/machines/quick/clear');
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ state: { state: 'idle' }, ready: true, awaiting_clear_since: null });
    const next = await print(form({ params: params('quick', 'benchy 2'), file: GCODE }));
    expect(next.status).toBe(200);
    await waitFor(async () => (await job(next.body.job_id)).status === 'completed', {
      what: 'the second job to complete',
    });
    expect((await client.request('POST', '/machines/quick/clear')).status).toBe(200);
  });

  it('echoes slicer_configuration and drops unknown keys of params', async () => {
    const res = await print(
      form({
        params: JSON.stringify({
          machine_id: 'quick',
          job_name: 'x',
          slicer_configuration: { filament_idx: 0 },
          colour: 'red',
        }),
        file: GCODE,
      }),
    );
    expect(res.status).toBe(200);
    expect(res.body.parameters).toEqual({
      machine_id: 'quick',
      job_name: 'x',
      slicer_configuration: { filament_idx: 0 },
    });
    await waitFor(async () => (await job(res.body.job_id)).status === 'completed');
    expect((await client.request('POST', '/machines/quick/clear')).status).toBe(200);
  });

  it('accepts exactly one of several concurrent prints to one machine; the others get 409 MachineBusy', async () => {
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, i) => print(form({ params: params('racer', `race-${i}`), file: GCODE }))),
    );
    const accepted = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 409);
    expect(accepted).toHaveLength(1);
    expect(refused).toHaveLength(4);
    for (const answer of refused)
      expect((answer.body as { error_code?: string }).error_code).toBe('MachineBusy');
    const jobs = await getJson<JobBody[]>(api.baseUrl, '/jobs?machine_id=racer');
    expect(jobs.map((j) => j.id)).toEqual([accepted[0]!.body.job_id]);

    // While it prints, a further print is refused, and the machine reports it is running.
    const again = await print(form({ params: params('racer'), file: GCODE }));
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      error_code: 'MachineBusy',
      message: `machine "racer" is busy with job ${accepted[0]!.body.job_id}`,
    });
    const machine = await client.request<{ state: unknown }>('GET', '/machines/racer');
    expect(machine.body.state).toEqual({ state: 'running' });

    const cancelled = await client.request<JobBody>('POST', `/jobs/${accepted[0]!.body.job_id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({
      status: 'cancelled',
      message: 'cancelled by request',
      finished_at: expect.any(String),
    });
    expect((await client.request<{ state: unknown }>('GET', '/machines/racer')).body.state).toEqual({
      state: 'idle',
    });
    expect(await uploadsLeft()).toEqual([]);
  });

  it('pauses, resumes and stops the print a machine is running; a stopped job ends cancelled', async () => {
    const res = await print(form({ params: params('long'), file: GCODE }));
    expect(res.status).toBe(200);
    const id = res.body.job_id;
    expect((await job(id)).status).toBe('printing');
    await waitFor(
      async () => ((await getJson<{ progress: number }>(api.baseUrl, '/machines/long')).progress ?? 0) > 0,
      {
        what: 'progress to advance',
      },
    );

    const paused = await client.request<{ state: unknown; progress: number }>('POST', '/machines/long/pause');
    expect(paused.status).toBe(200);
    expect(paused.body.state).toEqual({ state: 'paused' });
    const frozen = paused.body.progress;
    expect((await getJson<{ progress: number }>(api.baseUrl, '/machines/long')).progress).toBe(frozen);

    const resumed = await client.request<{ state: unknown }>('POST', '/machines/long/resume');
    expect(resumed.status).toBe(200);
    expect(resumed.body.state).toEqual({ state: 'running' });

    const stopped = await client.request<{ state: unknown; progress: unknown }>(
      'POST',
      '/machines/long/stop',
    );
    expect(stopped.status).toBe(200);
    expect(stopped.body).toMatchObject({ state: { state: 'idle' }, progress: null });
    const ended = await waitFor(async () => {
      const current = await job(id);
      return current.status === 'cancelled' && current;
    });
    expect(ended.message).toBe('the print was stopped on the machine');
    await waitFor(async () => (await workDirsLeft()).length === 0, {
      what: 'the job work dir to be removed',
    });
  });

  it('refuses a machine that is not idle with 409 MachineBusy and records no job', async () => {
    const res = await print(form({ params: params('working'), file: GCODE }));
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      request_id: res.headers.get('x-request-id'),
      error_code: 'MachineBusy',
      message: 'machine "working" is running, not idle',
    });
    expect(await getJson(api.baseUrl, '/jobs?machine_id=working')).toEqual([]);
    expect(await uploadsLeft()).toEqual([]);
  });

  it('refuses a machine that reports a failure with 409 MachineRejected quoting the failure', async () => {
    const res = await print(form({ params: params('jammed'), file: GCODE }));
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      request_id: res.headers.get('x-request-id'),
      error_code: 'MachineRejected',
      message: 'machine "jammed" reports a failure: filament jam; clear it before printing',
    });
    expect(await getJson(api.baseUrl, '/jobs?machine_id=jammed')).toEqual([]);
    expect(await uploadsLeft()).toEqual([]);
  });

  it('refuses a machine that does not answer with 503 MachineOffline', async () => {
    const res = await print(form({ params: params('gone'), file: GCODE }));
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ error_code: 'MachineOffline', message: 'machine "gone" is offline' });
    expect(await uploadsLeft()).toEqual([]);
  });

  it('answers 404 NotFound for an unknown machine and keeps no file', async () => {
    const res = await print(form({ params: params('nowhere'), file: GCODE }));
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ error_code: 'NotFound', message: 'no machine with id "nowhere"' });
    expect(await uploadsLeft()).toEqual([]);
  });

  it('answers 400 InvalidDesign for a design that cannot be printed and records no job', async () => {
    const before = await getJson<JobBody[]>(api.baseUrl, '/jobs?machine_id=quick');
    const res = await print(
      form({ params: params('quick', 'junk'), file: 'this is not a design', fileName: 'notes.txt' }),
    );
    expect(res.status).toBe(400);
    const body = res.body as unknown as { error_code: string; message: string };
    expect(body.error_code).toBe('InvalidDesign');
    expect(body.message).toBe(
      'notes.txt is not a design this service can print: expected STL (ASCII or binary), 3MF, OBJ or G-code',
    );
    // The client never got a job id, so there is no job: the answer is the error.
    expect(await getJson<JobBody[]>(api.baseUrl, '/jobs?machine_id=quick')).toEqual(before);
    expect(await workDirsLeft()).toEqual([]);
    expect(await uploadsLeft()).toEqual([]);
    // The machine is free again.
    const next = await print(form({ params: params('quick'), file: GCODE }));
    expect(next.status).toBe(200);
    await waitFor(async () => (await job(next.body.job_id)).status === 'completed');
    expect((await client.request('POST', '/machines/quick/clear')).status).toBe(200);
  });

  it('answers 400 BadRequest naming the part that is missing or wrong', async () => {
    const cases: [FormData | string, string][] = [
      [form({ file: GCODE }), 'the multipart body has no "params" part (JSON PrintParameters)'],
      [form({ params: params('quick') }), 'the multipart body has no "file" part (the design to print)'],
      [form({ params: '{"machine_id": "quick",', file: GCODE }), 'the "params" part is not valid JSON: '],
      [
        form({ params: JSON.stringify({ machine_id: 'quick' }), file: GCODE }),
        `the "params" part is not valid PrintParameters: must have required property 'job_name'`,
      ],
      [
        form({ params: JSON.stringify({ machine_id: { id: 1 }, job_name: 'x' }), file: GCODE }),
        'the "params" part is not valid PrintParameters: machine_id must be string',
      ],
      [
        form({
          params: JSON.stringify({
            machine_id: 'quick',
            job_name: 'x',
            slicer_configuration: { filament_idx: -1 },
          }),
          file: GCODE,
        }),
        'the "params" part is not valid PrintParameters: slicer_configuration',
      ],
    ];
    for (const [body, message] of cases) {
      const res = await print(body as FormData);
      expect(res.status, message).toBe(400);
      const error = res.body as unknown as { error_code: string; message: string };
      expect(error.error_code).toBe('BadRequest');
      expect(error.message.startsWith(message), `${error.message} should start with ${message}`).toBe(true);
    }
    expect(await uploadsLeft()).toEqual([]);
  });

  it('answers 400 for a body that is not multipart, or malformed multipart', async () => {
    const json = await client.request('POST', '/print', {
      headers: { 'content-type': 'application/json' },
      body: params('quick'),
    });
    expect(json.status).toBe(400);
    expect(json.body).toMatchObject({
      error_code: 'BadRequest',
      message: 'POST /print expects a multipart/form-data body with a "file" part and a "params" part',
    });
    const truncated = await client.request('POST', '/print', {
      headers: { 'content-type': 'multipart/form-data; boundary=XyZ' },
      body: '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.gcode"\r\n\r\nG28\r\n',
    });
    expect(truncated.status).toBe(400);
    expect(truncated.body).toMatchObject({
      error_code: 'BadRequest',
      message: expect.stringMatching(/^malformed multipart body: /),
    });
    const noBoundary = await client.request('POST', '/print', {
      headers: { 'content-type': 'multipart/form-data' },
      body: 'whatever',
    });
    expect(noBoundary.status).toBe(400);
    expect(noBoundary.body).toMatchObject({ error_code: 'BadRequest' });
    expect(await uploadsLeft()).toEqual([]);
  });

  it('answers 413 PayloadTooLarge above the configured upload limit and keeps no file', async () => {
    const big = new Uint8Array(1024 * 1024 + 1).fill(0x47);
    const res = await print(form({ params: params('quick'), file: big }));
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({
      error_code: 'PayloadTooLarge',
      message: 'the "file" part is larger than the upload limit of 1 MiB',
    });
    expect(await uploadsLeft()).toEqual([]);
    expect(await getJson<JobBody[]>(api.baseUrl, '/jobs?machine_id=quick')).not.toContainEqual(
      expect.objectContaining({ file_size: big.length }),
    );
  });
});

describe('jobs', () => {
  let api: MachineApiUnderTest;
  let client: ContractClient;
  const ids: string[] = [];
  beforeAll(async () => {
    api = await startMachineApi(
      // Printers that clear their own beds take the next job without a confirmation.
      '[machines.a]\ntype = "Noop"\nprint_seconds = 0\nauto_clear = true\n[machines.b]\ntype = "Noop"\nprint_seconds = 0\n',
    );
    client = await ContractClient.create(api.baseUrl);
    for (const machine of ['a', 'b', 'a']) {
      const res = await client.request<{ job_id: string }>('POST', '/print', {
        body: form({ params: params(machine), file: GCODE }),
      });
      expect(res.status).toBe(200);
      ids.push(res.body.job_id);
      await waitFor(
        async () => (await getJson<JobBody>(api.baseUrl, `/jobs/${res.body.job_id}`)).status === 'completed',
      );
    }
  });
  afterAll(() => api.close());

  it('GET /jobs lists jobs most recent first, filtered by machine and status, limited', async () => {
    const all = await client.request<JobBody[]>('GET', '/jobs');
    expect(all.status).toBe(200);
    expect(all.body.map((j) => j.id)).toEqual([...ids].reverse());
    expect((await client.request<JobBody[]>('GET', '/jobs?machine_id=a')).body.map((j) => j.id)).toEqual([
      ids[2],
      ids[0],
    ]);
    expect(
      (await client.request<JobBody[]>('GET', '/jobs?status=completed&limit=1')).body.map((j) => j.id),
    ).toEqual([ids[2]]);
    expect((await client.request<JobBody[]>('GET', '/jobs?status=failed')).body).toEqual([]);
  });

  it('GET /jobs filters by creation time: created_after inclusive, created_before exclusive, any offset', async () => {
    const all = (await client.request<(JobBody & { created_at: string })[]>('GET', '/jobs')).body;
    const [third, second, first] = all;
    const list = async (query: string) =>
      (await client.request<JobBody[]>('GET', `/jobs?${query}`)).body.map((j) => j.id);
    const q = encodeURIComponent;
    expect(await list(`created_after=${q(second!.created_at)}`)).toEqual(
      all.filter((j) => j.created_at >= second!.created_at).map((j) => j.id),
    );
    expect(await list(`created_before=${q(second!.created_at)}`)).toEqual(
      all.filter((j) => j.created_at < second!.created_at).map((j) => j.id),
    );
    expect(await list(`created_before=${q(first!.created_at)}`)).toEqual([]);
    // The same instant written with another offset selects the same jobs.
    const at = new Date(third!.created_at);
    const shifted = new Date(at.getTime() + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    expect(await list(`created_after=${q(shifted)}&machine_id=a`)).toEqual([ids[2]]);
  });

  it('GET /jobs rejects a bad filter with 400', async () => {
    for (const query of [
      'created_after=yesterday',
      'created_before=2026-11-24',
      'created_after=2026-11-24T25:00:00Z',
    ]) {
      const res = await client.request('GET', `/jobs?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body).toMatchObject({
        error_code: 'BadRequest',
        message: expect.stringMatching(
          /^querystring\/created_(after|before) must match format "date-time"$|^created_(after|before): expected an RFC 3339 date-time/,
        ),
      });
    }
    for (const query of ['limit=0', 'limit=1001', 'status=dancing']) {
      const res = await client.request('GET', `/jobs?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body).toMatchObject({ error_code: 'BadRequest' });
    }
  });

  it('GET /jobs/{id} of an unknown job is 404, cancelling a finished job is 409 Conflict', async () => {
    const missing = await client.request('GET', '/jobs/3f1c6d2e-0000-4000-8000-000000000000');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({
      error_code: 'NotFound',
      message: 'no job with id "3f1c6d2e-0000-4000-8000-000000000000"',
    });
    expect((await client.request('POST', '/jobs/nope/cancel')).status).toBe(404);
    const finished = await client.request('POST', `/jobs/${ids[0]}/cancel`);
    expect(finished.status).toBe(409);
    expect(finished.body).toMatchObject({
      error_code: 'Conflict',
      message: `job ${ids[0]} is already completed`,
    });
  });

  it('GET /metrics exports machine states and temperatures, job outcomes and request durations', async () => {
    const res = await fetch(`${api.baseUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await res.text();
    expect(text).toContain('machine_api_jobs_finished_total{outcome="completed"} 3');
    expect(text).toContain('machine_api_jobs_finished_total{outcome="failed"} 0');
    expect(text).toContain('machine_api_machine_state{id="a",state="idle"} 1');
    expect(text).toContain('machine_api_machine_state{id="a",state="running"} 0');
    expect(text).toContain('machine_api_machine_temperature_celsius{id="b",sensor="extruder"} 25');
    expect(text).toMatch(
      /machine_api_http_request_duration_seconds_count\{method="POST",route="\/print",status_code="200"\} 3/,
    );
  });
});

describe('jobs survive a restart', () => {
  it('keeps finished jobs and fails the ones that were in flight, with a message', async () => {
    const first = await startMachineApi(
      '[machines.m]\ntype = "Noop"\nprint_seconds = 600\n[machines.n]\ntype = "Noop"\nprint_seconds = 0\n',
    );
    const dir = first.dir;
    let second: MachineApiUnderTest | undefined;
    try {
      const quick = (await (
        await postPrint(first.baseUrl, { machineId: 'n', jobName: 'cube', file: GCODE })
      ).json()) as { job_id: string };
      await waitFor(
        async () => (await getJson<JobBody>(first.baseUrl, `/jobs/${quick.job_id}`)).status === 'completed',
      );
      const running = (await (
        await postPrint(first.baseUrl, { machineId: 'm', jobName: 'cube', file: GCODE })
      ).json()) as { job_id: string };
      expect((await getJson<JobBody>(first.baseUrl, `/jobs/${running.job_id}`)).status).toBe('printing');
      await first.service.close();

      second = await startMachineApi('[machines.m]\ntype = "Noop"\n[machines.n]\ntype = "Noop"\n', { dir });
      expect(await getJson<JobBody>(second.baseUrl, `/jobs/${quick.job_id}`)).toMatchObject({
        status: 'completed',
        message: null,
      });
      expect(await getJson<JobBody>(second.baseUrl, `/jobs/${running.job_id}`)).toMatchObject({
        status: 'failed',
        message: 'the simulated machine was shut down',
        finished_at: expect.any(String),
      });
      expect(await readdir(join(second.dataDir, 'jobs'))).toEqual([]);
      // Both beds still hold what the prints left: the confirmation survives the restart.
      for (const id of ['m', 'n']) {
        expect(await getJson(second.baseUrl, `/machines/${id}`), id).toMatchObject({
          state: { state: 'idle' },
          ready: false,
          awaiting_clear_since: expect.any(String),
        });
      }
    } finally {
      await second?.close();
      await first.close().catch(() => undefined);
    }
  });

  it('fails a job a crashed run left in flight and clears its leftover files', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'machine-api-crash-'));
    try {
      const dataDir = join(dir, 'data');
      await mkdir(join(dataDir, 'jobs', 'stale'), { recursive: true });
      await mkdir(join(dataDir, 'uploads'), { recursive: true });
      await writeFile(join(dataDir, 'uploads', 'half.upload'), 'G28');
      const database = await openJobDatabase({ dataDir, url: await testDatabaseUrl(dir) });
      const store = new JobStore(database.db);
      const id = '0b0e5c1e-1111-4222-8333-444455556666';
      await store.insert({
        id,
        machineId: 'm',
        jobName: 'crashed',
        fileName: 'a.stl',
        fileSize: 3,
        parameters: { machine_id: 'm', job_name: 'crashed' },
      });
      await store.setStatus(id, 'slicing');
      await database.close();

      const api = await startMachineApi('[machines.m]\ntype = "Noop"\n', { dir });
      try {
        expect(await getJson<JobBody>(api.baseUrl, `/jobs/${id}`)).toMatchObject({
          status: 'failed',
          message:
            'machine-api stopped while the job was slicing; what the machine did afterwards is unknown',
        });
        expect(await readdir(join(dataDir, 'jobs'))).toEqual([]);
        expect(await readdir(join(dataDir, 'uploads'))).toEqual([]);
      } finally {
        await api.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
