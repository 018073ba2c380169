/**
 * Hostile requests: wrong types in `params` (never coerced), error bodies of the service's shape for
 * whatever Fastify or Node's HTTP parser refuses, a machine held by a job saying so, and a client that
 * hangs up before its job reaches the machine cancelling it.
 */

import { readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asciiStl, requirePrusaSlicer, sphere } from './design-fixtures.js';
import { getJson, type MachineApiUnderTest, startMachineApi, waitFor } from './harness.js';

const generic = new URL('../profiles/generic-fdm-0.4.ini', import.meta.url).pathname;

const CONFIG = `
[machines.sim]
type = "Noop"
print_seconds = 0
filaments = [{ material = { type = "pla" } }, { material = { type = "petg" } }]

[machines.slow]
type = "Noop"
print_seconds = 0
slicer = { type = "Prusa", config = "printer.ini", timeout_seconds = 120 }
`;

const GCODE = 'G28\nG1 X10 Y10 Z0.2 F3000\nM104 S0\n';
/** Takes PrusaSlicer seconds: long enough to look at the machine, or hang up, while it slices. */
const BIG_BALL = asciiStl(sphere(40, 400, 500));

interface ErrorBody {
  request_id: string;
  error_code: string;
  message: string;
}

interface JobBody {
  id: string;
  status: string;
  message: string | null;
}

let api: MachineApiUnderTest;

beforeAll(async () => {
  requirePrusaSlicer();
  api = await startMachineApi(CONFIG, { files: { 'printer.ini': await readFile(generic, 'utf8') } });
});

afterAll(async () => {
  await api?.close();
});

function printForm(params: unknown, file = GCODE, fileName = 'part.gcode'): FormData {
  const form = new FormData();
  form.append('params', typeof params === 'string' ? params : JSON.stringify(params));
  form.append('file', new Blob([file]), fileName);
  return form;
}

async function post(form: FormData): Promise<{ status: number; body: unknown; requestId: string | null }> {
  const res = await fetch(`${api.baseUrl}/print`, { method: 'POST', body: form });
  return { status: res.status, body: await res.json(), requestId: res.headers.get('x-request-id') };
}

/** Sends raw bytes and returns the raw HTTP response text (the server closes the connection). */
function rawRequest(bytes: string): Promise<string> {
  const { port } = new URL(api.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
    });
    socket.on('end', () => resolve(answer));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
    socket.write(bytes);
  });
}

function parseRaw(answer: string): { status: number; headers: Record<string, string>; body: ErrorBody } {
  const [head, body] = answer.split('\r\n\r\n');
  const [statusLine, ...headerLines] = head!.split('\r\n');
  const headers = Object.fromEntries(
    headerLines.map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
    }),
  );
  return { status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(body!) as ErrorBody };
}

describe('params are validated without coercion', () => {
  const cases: [string, unknown, string][] = [
    ['job_name null', { machine_id: 'sim', job_name: null }, 'job_name must be string'],
    ['job_name a number', { machine_id: 'sim', job_name: 1 }, 'job_name must be string'],
    ['machine_id an array', { machine_id: ['sim'], job_name: 'x' }, 'machine_id must be string'],
    [
      'slicer_configuration an array',
      { machine_id: 'sim', job_name: 'x', slicer_configuration: [0] },
      'slicer_configuration must be object',
    ],
    [
      'filament_idx a string',
      { machine_id: 'sim', job_name: 'x', slicer_configuration: { filament_idx: '0' } },
      'slicer_configuration.filament_idx must be integer',
    ],
    [
      'filament_idx a boolean',
      { machine_id: 'sim', job_name: 'x', slicer_configuration: { filament_idx: true } },
      'slicer_configuration.filament_idx must be integer',
    ],
    [
      'filament_idx negative',
      { machine_id: 'sim', job_name: 'x', slicer_configuration: { filament_idx: -1 } },
      'slicer_configuration.filament_idx must be >= 0',
    ],
    ['params an array', [], 'must be object'],
  ];
  for (const [name, params, problem] of cases) {
    it(`answers 400 BadRequest naming the field for ${name}, and records no job`, async () => {
      const res = await post(printForm(params));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        request_id: res.requestId,
        error_code: 'BadRequest',
        message: `the "params" part is not valid PrintParameters: ${problem}`,
      });
      expect(await getJson(api.baseUrl, '/jobs')).toEqual([]);
    });
  }

  it('answers 400 when filament_idx does not index a configured filament', async () => {
    const res = await post(
      printForm({ machine_id: 'sim', job_name: 'x', slicer_configuration: { filament_idx: 2 } }),
    );
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      error_code: 'BadRequest',
      message:
        'slicer_configuration.filament_idx 2 does not index a filament of machine "sim": it has 2 (0 to 1)',
    });
    expect(await getJson(api.baseUrl, '/jobs')).toEqual([]);
    const fine = await post(
      printForm({ machine_id: 'sim', job_name: 'x', slicer_configuration: { filament_idx: 1 } }),
    );
    expect(fine.status).toBe(200);
  });
});

describe('every error has the service shape', () => {
  it('a URL with malformed percent-encoding answers 400 BadRequest', async () => {
    const res = await fetch(`${api.baseUrl}/machines/%ZZ`);
    const body = (await res.json()) as ErrorBody;
    expect(res.status).toBe(400);
    expect(body).toEqual({
      request_id: res.headers.get('x-request-id'),
      error_code: 'BadRequest',
      message: 'the URL /machines/%ZZ is not valid: it has a malformed percent-encoding',
    });
  });

  it('a path segment longer than the router takes answers 414 UriTooLong', async () => {
    const res = await fetch(`${api.baseUrl}/machines/${'m'.repeat(300)}`);
    const body = (await res.json()) as ErrorBody;
    expect(res.status).toBe(414);
    expect(body.request_id).toBe(res.headers.get('x-request-id'));
    expect(body.error_code).toBe('UriTooLong');
    expect(body.message).toMatch(/has a path segment longer than 200 characters$/);
  });

  const parserCases: [string, string, number, string, string][] = [
    [
      'headers larger than 16 KiB',
      `GET /ping HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      431,
      'RequestHeaderFieldsTooLarge',
      'the request line and headers are larger than the server accepts (16 KiB)',
    ],
    [
      'a Content-Length that is not a number',
      'POST /print HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n',
      400,
      'BadRequest',
      'the Content-Length header is not a valid length',
    ],
    [
      'broken chunked encoding',
      'POST /print HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\nxx\r\n',
      400,
      'BadRequest',
      'the chunked request body is malformed (bad chunk size)',
    ],
    [
      'a request line that is not HTTP',
      'HELLO\r\n\r\n',
      400,
      'BadRequest',
      'the request is not valid HTTP/1.1 (HPE_INVALID_METHOD)',
    ],
  ];
  for (const [name, bytes, status, code, message] of parserCases) {
    it(`${name} answers ${status} ${code} with x-request-id`, async () => {
      const answer = parseRaw(await rawRequest(bytes));
      expect(answer.status).toBe(status);
      expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(answer.body).toEqual({ request_id: answer.headers['x-request-id'], error_code: code, message });
    });
  }
});

describe('a machine held by a job says so, and a client hanging up cancels its job', () => {
  it('reports current_job while slicing, and the job is cancelled when the client disconnects', async () => {
    const controller = new AbortController();
    const form = printForm({ machine_id: 'slow', job_name: 'ball' }, BIG_BALL, 'ball.stl');
    const pending = fetch(`${api.baseUrl}/print`, {
      method: 'POST',
      body: form,
      signal: controller.signal,
    }).catch((error: unknown) => error);
    const held = await waitFor(
      async () => {
        const machine = await getJson<{ state: unknown; current_job: { id: string; status: string } | null }>(
          api.baseUrl,
          '/machines/slow',
        );
        return machine.current_job?.status === 'slicing' ? machine : undefined;
      },
      { what: 'the machine to report its slicing job' },
    );
    expect(held.current_job).toEqual({ id: expect.any(String), status: 'slicing', progress: null });
    const listed = await getJson<{ id: string; current_job: unknown }[]>(api.baseUrl, '/machines');
    expect(listed.find((machine) => machine.id === 'slow')?.current_job).toEqual(held.current_job);

    controller.abort();
    await pending;
    const job = await waitFor(
      async () => {
        const found = await getJson<JobBody>(api.baseUrl, `/jobs/${held.current_job!.id}`);
        return found.status === 'cancelled' ? found : undefined;
      },
      { what: 'the job to be cancelled' },
    );
    expect(job.message).toBe('the client disconnected before the job started printing');
    const free = await getJson<{ current_job: unknown }>(api.baseUrl, '/machines/slow');
    expect(free.current_job).toBeNull();
  });
});
