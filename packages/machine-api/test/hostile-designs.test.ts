/**
 * Hostile designs: a corpus generated here into a temp dir (nothing large is committed) of zip bombs,
 * endless lines, lying headers and random bytes. The configured limits are lowered so that "near the
 * limit" stays small; each design must be refused with 400 InvalidDesign and a message naming the
 * `[server]` key to raise, leave no job, no file in the data dir or TMPDIR and no slicer running, while
 * `/ping` keeps answering.
 */

import { randomBytes } from 'node:crypto';
import { openAsBlob } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { strToU8, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binaryStl, cube, requirePrusaSlicer, threeMf, threeMfModel } from './design-fixtures.js';
import { getJson, type MachineApiUnderTest, startMachineApi, waitFor } from './harness.js';

const generic = new URL('../profiles/generic-fdm-0.4.ini', import.meta.url).pathname;
const MIB = 1024 * 1024;

const CONFIG = `
[server]
max_upload_mib = 8
max_line_bytes = 4096
max_3mf_uncompressed_mib = 4
max_3mf_compression_ratio = 50
max_triangles = 20000
max_vertices = 20000

[machines.sim]
type = "Noop"
print_seconds = 0
slicer = { type = "Prusa", config = "printer.ini" }
`;

/** A 3MF with `model` as its model part (stored uncompressed when `stored`) and extra entries. */
function package3mf(model: string, options: { stored?: boolean; extra?: Record<string, Uint8Array> } = {}) {
  const zipped = threeMf(model);
  if (!options.stored && !options.extra) return zipped;
  return Buffer.from(
    zipSync({
      '[Content_Types].xml': strToU8('<Types/>'),
      '3D/3dmodel.model': [strToU8(model), { level: options.stored ? 0 : 9 }],
      ...Object.fromEntries(
        Object.entries(options.extra ?? {}).map(([name, data]) => [name, [data, { level: 0 }]]),
      ),
    }),
  );
}

/** A model of `count` triangles over random vertex indices: little compression, many triangles. */
function manyTriangles(count: number): string {
  const faces: string[] = [];
  for (let i = 0; i < count; i++) {
    const [a, b, c] = [0, 1, 2].map(() => Math.floor(Math.random() * 3));
    faces.push(`<triangle v1="${a}" v2="${b}" v3="${c}"/>`);
  }
  return threeMfModel(cube(10)).replace('</triangles>', `${faces.join('')}</triangles>`);
}

/** A binary STL whose header announces `announced` triangles but which holds `actual`. */
function lyingStl(announced: number, actual: number): Buffer {
  const stl = binaryStl(
    cube(10).concat(Array.from({ length: Math.max(0, actual - 12) }, () => cube(10)[0]!)),
  );
  const out = Buffer.from(stl.subarray(0, 84 + actual * 50));
  out.writeUInt32LE(announced, 80);
  return out;
}

interface Hostile {
  name: string;
  fileName: string;
  content: () => Buffer;
  /** The message, or a pattern of it: it names what is wrong and the key to raise. */
  message: RegExp;
}

const NOT_A_DESIGN =
  /is not a design this service can print: expected STL \(ASCII or binary\), 3MF, OBJ or G-code$/;
const ONE_LINE = 7 * MIB;

const corpus: Hostile[] = [
  {
    name: 'zip bomb by size: an attachment inflating past the 3MF limit',
    fileName: 'bomb-size.3mf',
    content: () =>
      package3mf(threeMfModel(cube(10)), { extra: { 'Metadata/blob.bin': randomBytes(5 * MIB) } }),
    message:
      /^3MF archive inflates to more than 5 MiB \(entry Metadata\/blob\.bin alone is 5 MiB\), over 4 MiB, the limit set by \[server\] max_3mf_uncompressed_mib$/,
  },
  {
    name: 'zip bomb by ratio: a model part of whitespace',
    fileName: 'bomb-ratio.3mf',
    content: () =>
      package3mf(threeMfModel(cube(10)).replace('<resources>', `<resources>${' '.repeat(3 * MIB)}`)),
    message:
      /^3MF entry 3D\/3dmodel\.model inflates \d+ times its stored size, more than 50, the limit set by \[server\] max_3mf_compression_ratio$/,
  },
  {
    name: 'whitespace-inflated model, stored uncompressed',
    fileName: 'whitespace.3mf',
    content: () =>
      package3mf(threeMfModel(cube(10)).replace('<resources>', `<resources>${' '.repeat(2 * MIB)}`), {
        stored: true,
      }),
    message:
      /^3MF part 3D\/3dmodel\.model has a tag or text run longer than 4096, the limit set by \[server\] max_line_bytes$/,
  },
  {
    name: 'too many triangles in a small 3MF',
    fileName: 'triangles.3mf',
    content: () => package3mf(manyTriangles(25_000)),
    message: /^3MF model has more triangles than 20000, the limit set by \[server\] max_triangles$/,
  },
  {
    name: 'one-line ASCII STL near the upload limit',
    fileName: 'line.stl',
    content: () => Buffer.from(`solid x ${'a'.repeat(ONE_LINE)}`),
    message: /^line 1 of the ASCII STL is longer than 4096, the limit set by \[server\] max_line_bytes$/,
  },
  {
    name: 'one-line OBJ near the upload limit',
    fileName: 'line.obj',
    content: () => Buffer.from('v 1 2 3 '.repeat(ONE_LINE / 8)),
    message: /^line 1 of the OBJ file is longer than 4096, the limit set by \[server\] max_line_bytes$/,
  },
  {
    name: 'one-line G-code near the upload limit',
    fileName: 'line.gcode',
    content: () => Buffer.from('G1 X1 Y1 '.repeat(ONE_LINE / 9)),
    message: /^line 1 of the G-code is longer than 4096, the limit set by \[server\] max_line_bytes$/,
  },
  {
    // The line check runs as the upload streams in: a line far past the first chunks, CRLF endings.
    name: 'G-code with an endless line after 20 000 short ones',
    fileName: 'late-line.gcode',
    content: () => Buffer.from(`${'G1 X1 Y1\r\n'.repeat(20_000)}${'G1 X1 '.repeat(1000)}\r\nG28\r\n`),
    message: /^line 20001 of the G-code is longer than 4096, the limit set by \[server\] max_line_bytes$/,
  },
  {
    name: 'G-code ending in an endless line without a newline',
    fileName: 'last-line.gcode',
    content: () => Buffer.from(`${'G28\n'.repeat(50_000)}${'G1 '.repeat(2000)}`),
    message: /^line 50001 of the G-code is longer than 4096, the limit set by \[server\] max_line_bytes$/,
  },
  {
    // 4095 characters and the carriage return: one byte over the limit, which counts the CR.
    name: 'G-code with one CRLF line a byte too long',
    fileName: 'crlf-line.gcode',
    content: () => Buffer.from(`${'G28\r\n'.repeat(30_000)}G1${' '.repeat(4094)}\r\r\nG28\r\n`),
    message: /^line 30001 of the G-code is longer than 4096, the limit set by \[server\] max_line_bytes$/,
  },
  {
    name: 'binary STL announcing far more triangles than it holds',
    fileName: 'lying-more.stl',
    content: () => lyingStl(1_000_000_000, 12),
    message:
      /^binary STL is truncated: its header announces 1000000000 triangles \(50000000084 bytes\) but the file has 684 bytes$/,
  },
  {
    name: 'binary STL announcing fewer triangles than it holds',
    fileName: 'lying-fewer.stl',
    content: () => lyingStl(1, 2000),
    message:
      /^binary STL triangle count does not match its size: its header announces 1 triangles \(134 bytes\) but the file has 100084 bytes$/,
  },
  {
    name: 'binary STL with more triangles than the limit',
    fileName: 'many.stl',
    content: () => lyingStl(25_000, 25_000),
    message: /^binary STL has 25000 triangles, more than 20000, the limit set by \[server\] max_triangles$/,
  },
  ...['stl', '3mf', 'obj', 'gcode'].map(
    (extension): Hostile => ({
      name: `random bytes named .${extension}`,
      fileName: `random.${extension}`,
      content: () => randomBytes(64 * 1024),
      message:
        extension === 'stl'
          ? /^(binary STL is truncated|binary STL triangle count does not match)|is not a design this service can print/
          : NOT_A_DESIGN,
    }),
  ),
];

let api: MachineApiUnderTest;
let privateTmp: string;
let corpusDir: string;
const originalTmp = process.env.TMPDIR;

beforeAll(async () => {
  requirePrusaSlicer();
  corpusDir = await mkdtemp(join(tmpdir(), 'hostile-corpus-'));
  // Everything the service puts in TMPDIR (its harness dir included) lands here, so leftovers show.
  privateTmp = await mkdtemp(join(tmpdir(), 'hostile-tmp-'));
  process.env.TMPDIR = privateTmp;
  api = await startMachineApi(CONFIG, { files: { 'printer.ini': await readFile(generic, 'utf8') } });
});

afterAll(async () => {
  await api?.close();
  process.env.TMPDIR = originalTmp;
  await rm(privateTmp, { recursive: true, force: true });
  await rm(corpusDir, { recursive: true, force: true });
});

/** Slicer processes started by this test process (the service runs in it). */
async function slicerChildren(): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const match = /^\d+ \((.*)\) \S+ (\d+)/.exec(stat);
    if (match && Number(match[2]) === process.pid && /prusa/i.test(match[1]!)) found.push(Number(entry));
  }
  return found;
}

/** Every file under `dir`, relative. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort();
}

/** Pings every 20 ms until `stop` resolves; returns how many pings were answered and how many were not. */
async function pingThroughout(stop: Promise<unknown>): Promise<{ answered: number; failed: number }> {
  let done = false;
  void stop.finally(() => {
    done = true;
  });
  const result = { answered: 0, failed: 0 };
  while (!done) {
    const res = await fetch(`${api.baseUrl}/ping`).catch(() => null);
    if (res?.status === 200 && ((await res.json()) as { message: string }).message === 'pong')
      result.answered++;
    else result.failed++;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return result;
}

/** A direct print names its machine; a queued job lets the queue choose (and measures the design first). */
const ROUTES = [
  { path: '/print', params: (jobName: string) => ({ machine_id: 'sim', job_name: jobName }) },
  { path: '/queue', params: (jobName: string) => ({ job_name: jobName }) },
];

describe('hostile designs', () => {
  for (const hostile of corpus) {
    it.each(ROUTES)(
      `refuses ${hostile.name} on $path with 400 InvalidDesign and leaves nothing behind`,
      async (route) => {
        const path = join(corpusDir, hostile.fileName);
        await writeFile(path, hostile.content());
        expect((await stat(path)).size).toBeLessThan(8 * MIB);
        const form = new FormData();
        form.append('params', JSON.stringify(route.params(hostile.name)));
        form.append('file', await openAsBlob(path), hostile.fileName);
        const response = fetch(`${api.baseUrl}${route.path}`, { method: 'POST', body: form });
        const pings = pingThroughout(response);
        const res = await response;
        const body = (await res.json()) as { request_id: string; error_code: string; message: string };

        expect(res.status).toBe(400);
        expect(res.headers.get('x-request-id')).toBe(body.request_id);
        expect(body.error_code).toBe('InvalidDesign');
        expect(body.message).toMatch(hostile.message);
        expect(await getJson(api.baseUrl, '/jobs')).toEqual([]);
        expect(await getJson(api.baseUrl, '/queue')).toEqual([]);
        expect(await filesUnder(join(api.dataDir, 'uploads'))).toEqual([]);
        expect(await filesUnder(join(api.dataDir, 'jobs'))).toEqual([]);
        expect(await filesUnder(join(api.dataDir, 'queue'))).toEqual([]);
        // The harness dir (config, data) is the only thing in TMPDIR, besides tsx's compile cache (the
        // design workers compile their TypeScript under the test runner).
        const inTmp = (await readdir(privateTmp)).filter((name) => !name.startsWith('tsx-'));
        expect(inTmp).toEqual([api.dir.split('/').pop()]);
        expect(await slicerChildren()).toEqual([]);
        const { failed } = await pings;
        expect(failed).toBe(0);
      },
    );
  }

  it('still prints G-code whose longest lines are exactly the line limit', async () => {
    // Lines of 4096 bytes (the CR counts) between and after runs of short ones, the last without newline.
    const longest = `G1${' '.repeat(4093)}\r`;
    const gcode = `${'G28\r\n'.repeat(30_000)}${longest}\n${'G28\n'.repeat(20_000)}${longest}`;
    const form = new FormData();
    form.append('params', JSON.stringify({ machine_id: 'sim', job_name: 'long lines' }));
    form.append('file', new Blob([gcode]), 'long-lines.gcode');
    const res = await fetch(`${api.baseUrl}/print`, { method: 'POST', body: form });
    expect(res.status).toBe(200);
    // The print takes 0 s; confirm the bed clear so the machine takes the next test's design.
    const { job_id } = (await res.json()) as { job_id: string };
    await waitFor(
      async () => (await getJson<{ status: string }>(api.baseUrl, `/jobs/${job_id}`)).status === 'completed',
    );
    expect((await fetch(`${api.baseUrl}/machines/sim/clear`, { method: 'POST' })).status).toBe(200);
  });

  it('still prints a design within every limit', async () => {
    const form = new FormData();
    form.append('params', JSON.stringify({ machine_id: 'sim', job_name: 'fine' }));
    form.append('file', new Blob([threeMf(threeMfModel(cube(20)))]), 'fine.3mf');
    const res = await fetch(`${api.baseUrl}/print`, { method: 'POST', body: form });
    expect(res.status).toBe(200);
  });
});
