/**
 * `GET /machines` is served from bytes kept between requests (src/server/machine-list.ts): every change of
 * a machine — a print starting and finishing, its bed confirmed clear, a printer going offline — must show
 * in the very next answer, and the kept bytes must be exactly what a fresh serialisation gives.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContractClient } from './contract.js';
import { type MachineApiUnderTest, postPrint, startMachineApi, waitFor } from './harness.js';
import { MoonrakerSim } from './sim/moonraker.js';

interface MachineBody {
  id: string;
  state: { state: string };
  progress: number | null;
  ready: boolean;
  awaiting_clear_since: string | null;
  current_job: { id: string; status: string; progress: number | null } | null;
}

describe('GET /machines after a change', () => {
  let api: MachineApiUnderTest;
  let client: ContractClient;
  let klipper: MoonrakerSim;

  beforeAll(async () => {
    klipper = await MoonrakerSim.start();
    // A slow fallback poll: only the changes themselves (pushes, the job runner, live reads) may update it.
    api = await startMachineApi(`
[server]
status_timeout_ms = 1000
observe_interval_ms = 600000

[machines.klipper]
type = "Moonraker"
endpoint = "${klipper.endpoint}"
variant = "Generic"
nozzle_diameter = 0.4
timeout_seconds = 1
filaments = []

[machines.noop]
type = "Noop"
print_seconds = 1
nozzle_diameter = 0.4
`);
    client = await ContractClient.create(api.baseUrl);
  });
  afterAll(async () => {
    await api.close();
    await klipper.close();
  });

  async function list(): Promise<Record<string, MachineBody>> {
    const res = await client.request('GET', '/machines');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    // The kept bytes are exactly the JSON of what they describe.
    expect(res.text).toBe(JSON.stringify(res.body));
    const machines = res.body as MachineBody[];
    expect(machines.map((machine) => machine.id)).toEqual(['klipper', 'noop']);
    return Object.fromEntries(machines.map((machine) => [machine.id, machine]));
  }

  it('shows a print starting, finishing and the bed confirmed clear in the very next answer', async () => {
    await waitFor(async () => (await list()).noop?.ready === true, { what: 'noop ready' });
    // Twice: the second answer comes from the kept bytes.
    expect((await list()).noop).toMatchObject({ state: { state: 'idle' }, current_job: null });

    const print = await postPrint(api.baseUrl, { machineId: 'noop', jobName: 'cube', file: 'G28\n' });
    expect(print.status).toBe(200);
    const { job_id: jobId } = (await print.json()) as { job_id: string };
    const printing = (await list()).noop;
    expect(printing).toMatchObject({
      state: { state: 'running' },
      ready: false,
      current_job: { id: jobId, status: 'printing' },
    });

    await waitFor(
      async () => {
        const res = await client.request('GET', `/jobs/${jobId}`);
        return (res.body as { status: string }).status === 'completed';
      },
      { what: 'job completed' },
    );
    const finished = (await list()).noop;
    expect(finished).toMatchObject({ state: { state: 'idle' }, ready: false, current_job: null });
    expect(finished?.awaiting_clear_since).toEqual(expect.any(String));

    const clear = await client.request('POST', '/machines/noop/clear');
    expect(clear.status).toBe(200);
    expect((await list()).noop).toMatchObject({
      state: { state: 'idle' },
      ready: true,
      awaiting_clear_since: null,
      current_job: null,
    });
  });

  it('shows a printer going offline and coming back in the very next answer', async () => {
    await waitFor(async () => (await list()).klipper?.state.state === 'idle', { what: 'klipper idle' });
    await klipper.refuse();
    // The live read of one machine records what it found; the list must not answer older bytes.
    await waitFor(
      async () => {
        const res = await client.request('GET', '/machines/klipper');
        return (res.body as MachineBody).state.state === 'offline';
      },
      { what: 'klipper offline' },
    );
    expect((await list()).klipper).toMatchObject({ state: { state: 'offline' }, ready: false });

    await klipper.acceptAgain();
    await waitFor(
      async () => {
        const res = await client.request('GET', '/machines/klipper');
        return (res.body as MachineBody).state.state === 'idle';
      },
      { what: 'klipper back' },
    );
    expect((await list()).klipper).toMatchObject({ state: { state: 'idle' }, ready: true });
  });
});
