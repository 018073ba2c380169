/**
 * One rule for what a machine can print (machines/prints.ts), over HTTP for every machine kind without a
 * slicer: a simulated machine takes an STL as it is, through `POST /print` and through `POST /queue`
 * alike; a real printer without a slicer prints G-code only, and both routes refuse the STL with the same
 * words. `GET /machines` states the rule per machine as `design_types`, which the dashboard reads.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asciiStl, cube } from './design-fixtures.js';
import { getJson, type MachineApiUnderTest, startMachineApi, waitFor } from './harness.js';
import { BambuPrinterSim } from './sim/bambu.js';
import { MarlinSim } from './sim/marlin.js';
import { MoonrakerSim } from './sim/moonraker.js';

const STL = asciiStl(cube(10));
const REAL_KINDS = ['bambu', 'moonraker', 'usb'] as const;

interface ErrorBody {
  error_code: string;
  message: string;
}

function form(params: Record<string, unknown>, file: string, fileName: string): FormData {
  const body = new FormData();
  body.append('params', JSON.stringify(params));
  body.append('file', new Blob([file]), fileName);
  return body;
}

describe('what a machine without a slicer can print', () => {
  let api: MachineApiUnderTest;
  let bambu: BambuPrinterSim;
  let moonraker: MoonrakerSim;
  let marlin: MarlinSim;

  beforeAll(async () => {
    [bambu, moonraker, marlin] = await Promise.all([
      BambuPrinterSim.start(),
      MoonrakerSim.start(),
      MarlinSim.start(),
    ]);
    api = await startMachineApi(`
${bambu.machineToml('bambu')}
[machines.moonraker]
type = "Moonraker"
endpoint = "${moonraker.endpoint}"
variant = "ElegooNeptune4"

[machines.sim]
type = "Noop"
print_seconds = 0.05

[machines.usb]
type = "Usb"
variant = "Generic"
port = "${marlin.hostPath}"
baud = 115200
`);
    await waitFor(
      async () => {
        const list = await getJson<{ id: string; ready: boolean }[]>(api.baseUrl, '/machines');
        return list.every((machine) => machine.ready);
      },
      { what: 'every machine ready' },
    );
  });

  afterAll(async () => {
    await api?.close();
    await Promise.all([bambu?.close(), moonraker?.close(), marlin?.close()]);
  });

  const post = async (path: '/print' | '/queue', params: Record<string, unknown>) => {
    const res = await fetch(`${api.baseUrl}${path}`, { method: 'POST', body: form(params, STL, 'cube.stl') });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('GET /machines says which design types each machine prints', async () => {
    const list = await getJson<{ id: string; design_types: string[] }[]>(api.baseUrl, '/machines');
    expect(list.map(({ id, design_types }) => [id, design_types])).toEqual([
      ['bambu', ['gcode']],
      ['moonraker', ['gcode']],
      ['sim', ['gcode', 'stl', '3mf', 'obj']],
      ['usb', ['gcode']],
    ]);
  });

  it('a simulated machine takes an STL through POST /print and through POST /queue', async () => {
    const direct = await post('/print', { machine_id: 'sim', job_name: 'direct' });
    expect(direct.status).toBe(200);
    const printed = await waitFor(
      async () => {
        const job = await getJson<{ status: string }>(api.baseUrl, `/jobs/${direct.body.job_id}`);
        return job.status === 'completed' ? job : undefined;
      },
      { what: 'the direct STL print to complete' },
    );
    expect(printed).toMatchObject({ status: 'completed', machine_id: 'sim', estimate: null });
    expect((await fetch(`${api.baseUrl}/machines/sim/clear`, { method: 'POST' })).status).toBe(200);

    const queued = await post('/queue', { job_name: 'queued', machine_ids: ['sim'] });
    expect(queued.status).toBe(201);
    expect(queued.body).toMatchObject({ status: 'queued', job_name: 'queued' });
    const done = await waitFor(
      async () => {
        const job = await getJson<{ status: string }>(api.baseUrl, `/jobs/${queued.body.id}`);
        return job.status === 'completed' ? job : undefined;
      },
      { what: 'the queued STL print to complete' },
    );
    expect(done).toMatchObject({ machine_id: 'sim', status: 'completed' });
    expect((await fetch(`${api.baseUrl}/machines/sim/clear`, { method: 'POST' })).status).toBe(200);
  });

  it('a queued STL for any machine is admitted: the simulated machine can take it', async () => {
    const queued = await post('/queue', { job_name: 'anywhere' });
    expect(queued.status).toBe(201);
    const done = await waitFor(
      async () => {
        const job = await getJson<{ status: string }>(api.baseUrl, `/jobs/${queued.body.id}`);
        return job.status === 'completed' ? job : undefined;
      },
      { what: 'the queued STL print to complete' },
    );
    expect(done).toMatchObject({ machine_id: 'sim' });
    expect((await fetch(`${api.baseUrl}/machines/sim/clear`, { method: 'POST' })).status).toBe(200);
  });

  for (const id of REAL_KINDS) {
    it(`a ${id} printer without a slicer refuses an STL on POST /print and POST /queue alike`, async () => {
      const direct = await post('/print', { machine_id: id, job_name: 'direct' });
      expect(direct).toEqual({
        status: 400,
        body: {
          request_id: expect.any(String),
          error_code: 'InvalidDesign',
          message: 'this machine has no slicer, so it prints G-code only (the design is an STL)',
        } satisfies ErrorBody & { request_id: unknown },
      });
      const queued = await post('/queue', { job_name: 'queued', machine_ids: [id] });
      expect(queued).toEqual({
        status: 400,
        body: {
          request_id: expect.any(String),
          error_code: 'BadRequest',
          message: `no configured machine could ever take this job: "${id}" has no slicer, so it prints G-code only (the design is an STL)`,
        },
      });
      expect(await getJson(api.baseUrl, '/queue')).toEqual([]);
      expect(await getJson(api.baseUrl, `/jobs?machine_id=${id}`)).toEqual([]);
    });
  }
});
