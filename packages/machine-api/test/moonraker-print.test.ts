/**
 * Print jobs on Moonraker printers through the real service: `POST /print` of G-code and of an STL sliced
 * by PrusaSlicer, followed to the end of the print; refused uploads, cancellation, a Moonraker that is down
 * at start and one that dies mid-print while the service keeps serving.
 */

import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContractClient } from './contract.js';
import { asciiStl, cube, requirePrusaSlicer } from './design-fixtures.js';
import { getJson, type MachineApiUnderTest, postPrint, startMachineApi, waitFor } from './harness.js';
import { MoonrakerSim } from './sim/moonraker.js';

const PROFILE = fileURLToPath(new URL('../profiles/elegoo-neptune4.ini', import.meta.url));
const GCODE = '; sliced elsewhere\nM140 S65\nM104 S220\nG28\nG1 X10 Y10 Z0.2 F3000\nG1 X60 E4\nM104 S0\n';

interface JobBody {
  id: string;
  machine_id: string;
  job_name: string;
  status: string;
  message: string | null;
}

interface MachineBody {
  state: { state: string; message?: string | null };
  progress: number | null;
  ready: boolean;
  awaiting_clear_since: string | null;
}

const MACHINES = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot'] as const;
type MachineId = (typeof MACHINES)[number];

describe('print jobs on Moonraker printers', () => {
  const sims = {} as Record<MachineId, MoonrakerSim>;
  let api: MachineApiUnderTest;
  let client: ContractClient;

  beforeAll(async () => {
    requirePrusaSlicer();
    for (const id of MACHINES) {
      // bravo prints by itself, 5 % of the file every 50 ms; the others advance when a test says so.
      sims[id] = await MoonrakerSim.start(id === 'bravo' ? { autoProgress: { tickMs: 50, step: 0.05 } } : {});
    }
    // delta: Moonraker down when the service starts.
    await sims.delta.refuse();
    const machine = (id: MachineId, extra = '') => `
[machines.${id}]
type = "Moonraker"
endpoint = "${sims[id].endpoint}"
variant = "ElegooNeptune4"
slicer = { type = "Prusa", config = "${PROFILE}" }
nozzle_diameter = 0.4
timeout_seconds = 2
poll_interval_seconds = 0.2
${extra}
[[machines.${id}.filaments]]
material.type = "pla"
`;
    api = await startMachineApi(
      `[server]\nstatus_timeout_ms = 3000\n${MACHINES.map((id) =>
        machine(
          id,
          id === 'echo'
            ? 'lost_print_grace_seconds = 1'
            : id === 'foxtrot'
              ? 'lost_print_grace_seconds = 60'
              : '',
        ),
      ).join('')}`,
    );
    client = await ContractClient.create(api.baseUrl);
  });

  afterAll(async () => {
    await api?.close();
    for (const sim of Object.values(sims)) await sim.close();
  });

  const job = (id: string) => getJson<JobBody>(api.baseUrl, `/jobs/${id}`);
  const machine = (id: MachineId) => getJson<MachineBody>(api.baseUrl, `/machines/${id}`);
  const jobReaches = (id: string, status: string) =>
    waitFor(
      async () => {
        const body = await job(id);
        return body.status === status && body;
      },
      { what: `job ${id} ${status}` },
    );

  async function print(machineId: MachineId, jobName: string, file: string | Uint8Array, fileName?: string) {
    const response = await postPrint(api.baseUrl, { machineId, jobName, file, fileName });
    // A PrintJobResponse on 200, the service's Error otherwise.
    const body = (await response.json()) as { job_id: string; message: string };
    return { status: response.status, body };
  }

  it('prints G-code: uploads it under the job name, follows the print to completed, takes the next job', async () => {
    const sim = sims.alpha;
    const first = await print('alpha', 'Bracket v3', GCODE);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      job_id: expect.any(String),
      parameters: { machine_id: 'alpha', job_name: 'Bracket v3' },
    });
    const jobId = first.body.job_id;
    const remote = `Bracket_v3-${jobId.slice(0, 8)}.gcode`;
    expect(sim.files.get(remote)?.toString()).toBe(GCODE);
    expect(sim.printStats).toMatchObject({ state: 'printing', filename: remote });
    expect((await job(jobId)).status).toBe('printing');

    sim.advance(0.5);
    const running = await waitFor(async () => {
      const body = await machine('alpha');
      return body.progress === 50 && body;
    });
    expect(running.state).toEqual({ state: 'running' });

    sim.advance(0.5);
    expect(await jobReaches(jobId, 'completed')).toMatchObject({ status: 'completed', message: null });
    // Klipper says `complete`, and so does the service, until someone confirms the bed is clear.
    expect(sim.printStats['state']).toBe('complete');
    expect(await machine('alpha')).toMatchObject({ state: { state: 'complete' }, ready: false });
    const refused = await print('alpha', 'Bracket v4', GCODE);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      error_code: 'MachineNotReady',
      message: expect.stringContaining('remove it, then confirm with POST /machines/alpha/clear'),
    });
    // The confirmation resets the finished file on Klipper (SDCARD_RESET_FILE): it reads standby again.
    const cleared = await client.request<MachineBody>('POST', '/machines/alpha/clear');
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ state: { state: 'idle' }, ready: true, awaiting_clear_since: null });
    expect(sim.printStats['state']).toBe('standby');

    const second = await print('alpha', 'Bracket v4', GCODE);
    expect(second.status).toBe(200);
    sim.advance(1);
    expect((await jobReaches(second.body.job_id, 'completed')).status).toBe('completed');
    expect((await client.request('POST', '/machines/alpha/clear')).status).toBe(200);
  });

  it('slices an STL with PrusaSlicer and prints the G-code it made until the printer completes it', async () => {
    const sim = sims.bravo;
    const response = await print('bravo', 'cube', asciiStl(cube(20)), 'cube.stl');
    expect(response.status).toBe(200);
    const jobId = response.body.job_id;
    const uploaded = sim.files.get(`cube-${jobId.slice(0, 8)}.gcode`)?.toString() ?? '';
    expect(uploaded).toMatch(/^; generated by PrusaSlicer/);
    expect(uploaded).toContain('G1 Z.2');
    expect((await jobReaches(jobId, 'completed')).status).toBe('completed');
    expect(sim.objects['virtual_sdcard']).toMatchObject({ progress: 1, is_active: false });
  });

  it("answers Moonraker's refusal of the upload and records no job", async () => {
    const sim = sims.charlie;
    sim.failNext('/server/files/upload', 507, 'Insufficient disk space');
    const refused = await client.request<{ error_code: string; message: string }>('POST', '/print', {
      body: printForm('charlie', 'too big', GCODE),
    });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      error_code: 'MachineRejected',
      message: expect.stringMatching(
        /^Moonraker refused the upload of too_big-[0-9a-f]{8}\.gcode: Insufficient disk space \(HTTP 507\)$/,
      ),
    });
    // Answered 4xx: the client never got a job id, so no job is left behind.
    expect(await getJson<JobBody[]>(api.baseUrl, '/jobs?machine_id=charlie')).toEqual([]);
    expect([...sim.files.keys()]).toEqual([]);
    expect((await machine('charlie')).state).toEqual({ state: 'idle' });
  });

  it('cancels a printing job on the printer; the printer is ready for the next job', async () => {
    const sim = sims.charlie;
    const response = await print('charlie', 'to cancel', GCODE);
    expect(response.status).toBe(200);
    const cancel = await client.request<JobBody>('POST', `/jobs/${response.body.job_id}/cancel`);
    expect(cancel.status).toBe(200);
    expect(cancel.body).toMatchObject({ status: 'cancelled' });
    expect(sim.printStats['state']).toBe('cancelled');
    expect((await machine('charlie')).state).toEqual({ state: 'complete' });
    // Clearing is refused while a print runs, allowed once it has ended.
    expect((await client.request('POST', '/machines/charlie/clear')).status).toBe(200);
    expect((await machine('charlie')).ready).toBe(true);
  });

  it('keeps a job whose printer went silent, saying since when, and goes on when it is found still printing', async () => {
    const sim = sims.foxtrot;
    const response = await print('foxtrot', 'patient', GCODE);
    expect(response.status).toBe(200);
    const jobId = response.body.job_id;
    sim.advance(0.3);
    await waitFor(async () => (await machine('foxtrot')).progress === 30, { what: 'progress 30' });
    const busy = await client.request('POST', '/machines/foxtrot/clear');
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({ error_code: 'MachineBusy' });
    await sim.refuse();
    const silent = await waitFor(async () => {
      const body = await job(jobId);
      return body.message !== null && body;
    });
    expect(silent.status).toBe('printing');
    expect(silent.message).toMatch(
      /^machine "foxtrot" has not answered since \d{4}-\d\d-\d\dT[\d:.]+Z; the job fails only if it stays silent beyond the machine's grace period, and goes on if the machine is found still printing it$/,
    );
    await sim.acceptAgain();
    await waitFor(async () => (await job(jobId)).message === null, { what: 'the message to go' });
    expect((await job(jobId)).status).toBe('printing');
    sim.advance(1);
    expect((await jobReaches(jobId, 'completed')).message).toBe(null);
  });

  it('refuses a job while Moonraker is down, and takes one once it answers again', async () => {
    const sim = sims.delta;
    expect((await machine('delta')).state).toEqual({ state: 'offline' });
    const refused = await client.request<{ error_code: string }>('POST', '/print', {
      body: printForm('delta', 'early', GCODE),
    });
    expect(refused.status).toBe(503);
    expect(refused.body.error_code).toBe('MachineOffline');

    await sim.acceptAgain();
    await waitFor(async () => (await machine('delta')).state.state === 'idle', { what: 'delta idle' });
    const accepted = await print('delta', 'later', GCODE);
    expect(accepted.status).toBe(200);
    sim.advance(1);
    expect((await jobReaches(accepted.body.job_id, 'completed')).status).toBe('completed');
  });

  it('fails the job with a clear message when Moonraker dies mid-print, and keeps serving', async () => {
    const sim = sims.echo;
    const response = await print('echo', 'doomed', GCODE);
    expect(response.status).toBe(200);
    sim.advance(0.2);
    await sim.die();
    const failed = await jobReaches(response.body.job_id, 'failed');
    expect(failed.message).toMatch(
      /^lost contact with Moonraker at http:\/\/127\.0\.0\.1:\d+ for more than 1 s while printing doomed-[0-9a-f]{8}\.gcode \(.+\); the print's outcome is unknown$/,
    );
    const ping = await fetch(`${api.baseUrl}/ping`);
    expect(ping.status).toBe(200);
    const list = await client.request<{ id: string; state: { state: string } }[]>('GET', '/machines');
    expect(list.status).toBe(200);
    expect(list.body.find((each) => each.id === 'echo')?.state).toEqual({ state: 'offline' });
    expect(list.body.find((each) => each.id === 'alpha')?.state).toEqual({ state: 'idle' });
    // A failed print leaves the bed to be looked at: clearing it is refused while Moonraker is gone.
    expect((await client.request('POST', '/machines/echo/clear')).status).toBe(503);
  });
});

/** The multipart body `POST /print` takes, for requests sent through the contract client. */
function printForm(machineId: string, jobName: string, gcode: string): FormData {
  const form = new FormData();
  form.append('params', JSON.stringify({ machine_id: machineId, job_name: jobName }));
  form.append('file', new Blob([gcode]), 'part.gcode');
  return form;
}
