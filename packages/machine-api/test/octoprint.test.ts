/**
 * "Send to printer" from a slicer: each slicer's exact request sequence replayed byte for byte (request
 * line, header order, multipart boundary and part order, `Expect: 100-continue`, file names with spaces
 * and non-ASCII), checking what each slicer reads from the answers (sources: PrusaSlicer and
 * SuperSlicer `src/slic3r/Utils/OctoPrint.cpp` + `Http.cpp`, OrcaSlicer's copy of them, Cura's
 * OctoPrint plugin `OctoPrintOutputDevice.py` / `DiscoverOctoPrintAction.py`).
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKeysCommand } from '../src/keys-command.js';
import { rewriteOctoPrintUrl } from '../src/octoprint/base-url.js';
import { type MachineApiUnderTest, startMachineApi, waitFor } from './harness.js';
import { curlMultipart, qtMultipart, rawRequest } from './raw-http.js';

const GCODE = Buffer.from(';FLAVOR:Marlin\nG28\nG1 Z5 F5000\nM104 S200\n'.repeat(400));

async function createKey(dataDir: string, name: string, scope: string): Promise<string> {
  let out = '';
  await runKeysCommand(['create'], { dataDir, name, scope, out: (text) => (out += text) });
  return out.split('\n')[0] as string;
}

/** What PrusaSlicer / SuperSlicer / OrcaSlicer do when "Test" or "Upload" is pressed: version, then upload. */
async function curlSlicerSequence(
  baseUrl: string,
  options: {
    userAgent: string;
    base: string;
    key: string;
    fileName: string;
    path?: string;
    print: boolean;
    plateIndex?: string;
  },
) {
  const host = new URL(baseUrl).host;
  const headers = (extra: [string, string][] = []): [string, string][] => [
    ['Host', host],
    ['User-Agent', options.userAgent],
    ['Accept', '*/*'],
    ['X-Api-Key', options.key],
    ...extra,
  ];
  // make_url(): base + "/" + "api/version" unless the base ends with "/"; curl then sends path and query.
  const url = (path: string) => {
    const full = new URL(options.base.endsWith('/') ? `${options.base}${path}` : `${options.base}/${path}`);
    return `${full.pathname}${full.search}`;
  };
  const version = await rawRequest(baseUrl, {
    method: 'GET',
    target: url('api/version'),
    headers: headers(),
  });
  const form = curlMultipart([
    { name: 'print', value: options.print ? 'true' : 'false' },
    { name: 'path', value: options.path ?? '' },
    ...(options.plateIndex ? [{ name: 'plateindex', value: options.plateIndex }] : []),
    { name: 'file', fileName: options.fileName, data: GCODE },
  ]);
  const upload = await rawRequest(baseUrl, {
    method: 'POST',
    target: url('api/files/local'),
    headers: headers([
      ['Content-Type', form.contentType],
      ['Expect', '100-continue'],
    ]),
    body: form.body,
  });
  return { version, upload };
}

/** What the curl-based slicers accept from `api/version` (OctoPrint::test). */
function curlSlicerAcceptsVersion(version: { status: number; body: string }): boolean {
  if (version.status >= 400) return false;
  const json = JSON.parse(version.body) as Record<string, unknown>;
  return typeof json.api === 'string' && (typeof json.text !== 'string' || json.text.startsWith('OctoPrint'));
}

describe('OctoPrint base URLs', () => {
  it('moves an API path that a slicer appended to the query of a base URL back into the path', () => {
    expect(rewriteOctoPrintUrl('/octoprint/queue/?material=petg/api/version')).toBe(
      '/octoprint/queue/api/version?material=petg',
    );
    expect(rewriteOctoPrintUrl('/octoprint/queue?material=petg&nozzle_diameter=0.4/api/files/local')).toBe(
      '/octoprint/queue/api/files/local?material=petg&nozzle_diameter=0.4',
    );
    expect(rewriteOctoPrintUrl('/octoprint/sim/api/version')).toBe('/octoprint/sim/api/version');
    expect(rewriteOctoPrintUrl('/machines?x=/api/version')).toBe('/machines?x=/api/version');
    // pyoctoprintapi joins its base and some endpoints with an extra slash.
    expect(rewriteOctoPrintUrl('/octoprint/sim//api/printer/bed')).toBe('/octoprint/sim/api/printer/bed');
    expect(rewriteOctoPrintUrl('/octoprint/sim//api/system/commands/core/restart?a=b//c')).toBe(
      '/octoprint/sim/api/system/commands/core/restart?a=b//c',
    );
  });
});

describe('send from your slicer (OctoPrint-compatible subset)', () => {
  let api: MachineApiUnderTest;
  let printKey: string;
  let readKey: string;

  beforeAll(async () => {
    api = await startMachineApi(`
[server]
auth = "keys"

[machines.sim]
type = "Noop"
print_seconds = 60
# These tests are about uploads: a cancelled print's bed needs no confirmation here.
auto_clear = true

[machines.spare]
type = "Noop"
print_seconds = 60
auto_clear = true

[machines.petg]
type = "Noop"
print_seconds = 60
auto_clear = true
filaments = [{ material = { type = "petg" } }]
loaded_filament_idx = 0
`);
    printKey = await createKey(api.dataDir, 'prusa-slicer', 'read,print');
    readKey = await createKey(api.dataDir, 'viewer', 'read');
  });
  afterAll(() => api.close());

  const jobs = (key: string) =>
    fetch(`${api.baseUrl}/jobs`, { headers: { 'x-api-key': key } }).then(
      (r) => r.json() as Promise<Record<string, unknown>[]>,
    );

  it('PrusaSlicer: Test passes, "Upload and print" prints a file named with spaces and non-ASCII', async () => {
    const { version, upload } = await curlSlicerSequence(api.baseUrl, {
      userAgent: 'PrusaSlicer/2.8.1',
      base: `${api.baseUrl}/octoprint/sim`,
      key: printKey,
      fileName: 'Würfel – 0.2mm PLA.gcode',
      print: true,
    });
    expect(version.status).toBe(200);
    expect(curlSlicerAcceptsVersion(version)).toBe(true);
    expect(JSON.parse(version.body)).toEqual({
      api: '0.1',
      server: '1.10.0',
      text: 'OctoPrint (machine-api 0.1.0)',
    });
    expect(upload.interim).toEqual([100]);
    expect(upload.status).toBe(201);
    const location = `${api.baseUrl}/octoprint/sim/api/files/local/W%C3%BCrfel%20%E2%80%93%200.2mm%20PLA.gcode`;
    expect(upload.headers.location).toBe(location);
    const body = JSON.parse(upload.body) as Record<string, unknown>;
    expect(body).toEqual({
      done: true,
      effectiveSelect: true,
      effectivePrint: true,
      files: {
        local: {
          name: 'Würfel – 0.2mm PLA.gcode',
          path: 'Würfel – 0.2mm PLA.gcode',
          origin: 'local',
          refs: { resource: location },
        },
      },
      job_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    const job = await getJsonWithKey(`/jobs/${body.job_id}`, printKey);
    expect(job).toMatchObject({
      machine_id: 'sim',
      job_name: 'Würfel – 0.2mm PLA',
      file_name: 'Würfel – 0.2mm PLA.gcode',
      file_size: GCODE.length,
      status: 'printing',
      owner: 'prusa-slicer',
    });
    // The machine is busy now: a second "Upload and print" is refused with 409 (PrusaSlicer shows "HTTP 409: …").
    const again = await curlSlicerSequence(api.baseUrl, {
      userAgent: 'PrusaSlicer/2.8.1',
      base: `${api.baseUrl}/octoprint/sim/`,
      key: printKey,
      fileName: 'second.gcode',
      print: true,
    });
    expect(again.upload.status).toBe(409);
    expect(JSON.parse(again.upload.body)).toEqual({
      error: expect.stringContaining('busy'),
    });
    await fetch(`${api.baseUrl}/jobs/${body.job_id}/cancel`, {
      method: 'POST',
      headers: { 'x-api-key': printKey },
    });
    await waitFor(
      async () => (await getJsonWithKey(`/jobs/${body.job_id}`, printKey)).status === 'cancelled',
    );
  });

  const getJsonWithKey = async (path: string, key: string) => {
    const res = await fetch(`${api.baseUrl}${path}`, { headers: { 'x-api-key': key } });
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, unknown>;
  };

  it('SuperSlicer: "Upload" without print stores the file (with its folder) for a later POST /files/{name}/print', async () => {
    const { version, upload } = await curlSlicerSequence(api.baseUrl, {
      userAgent: 'SuperSlicer/2.5.59',
      base: `${api.baseUrl}/octoprint/spare/`,
      key: printKey,
      fileName: 'bracket v2 (left).gcode',
      path: 'brackets',
      print: false,
    });
    expect(curlSlicerAcceptsVersion(version)).toBe(true);
    expect(upload.status).toBe(201);
    expect(JSON.parse(upload.body)).toMatchObject({
      done: true,
      effectivePrint: false,
      effectiveSelect: false,
      files: { local: { name: 'bracket v2 (left).gcode', path: 'brackets/bracket v2 (left).gcode' } },
    });
    expect(JSON.parse(upload.body).job_id).toBeUndefined();
    const before = await jobs(printKey);
    const stored = (await getJsonWithKey('/files', printKey)) as unknown as Record<string, unknown>[];
    expect(stored).toContainEqual({
      name: 'brackets/bracket v2 (left).gcode',
      size: GCODE.length,
      machine_id: 'spare',
      queue_constraints: null,
      owner: 'prusa-slicer',
      created_at: expect.any(String),
    });
    const print = await fetch(
      `${api.baseUrl}/files/${encodeURIComponent('brackets/bracket v2 (left).gcode')}/print`,
      {
        method: 'POST',
        headers: { 'x-api-key': printKey },
      },
    );
    expect(print.status).toBe(200);
    const job = (await print.json()) as Record<string, unknown>;
    expect(job).toMatchObject({
      machine_id: 'spare',
      job_name: 'bracket v2 (left)',
      status: 'printing',
      owner: 'prusa-slicer',
    });
    expect((await jobs(printKey)).length).toBe(before.length + 1);
    await fetch(`${api.baseUrl}/machines/spare/stop`, {
      method: 'POST',
      headers: { 'x-api-key': await createKey(api.dataDir, 'ops', 'control') },
    });
    await waitFor(async () => (await getJsonWithKey(`/jobs/${job.id}`, printKey)).status === 'cancelled');
  });

  it('a print key removes only the stored files it uploaded; control removes any', async () => {
    const { upload } = await curlSlicerSequence(api.baseUrl, {
      userAgent: 'PrusaSlicer/2.8.1',
      base: `${api.baseUrl}/octoprint/sim`,
      key: printKey,
      fileName: 'mine.gcode',
      print: false,
    });
    expect(upload.status).toBe(201);
    const other = await createKey(api.dataDir, 'other-slicer', 'read,print');
    const refused = await fetch(`${api.baseUrl}/files/mine.gcode`, {
      method: 'DELETE',
      headers: { 'x-api-key': other },
    });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error_code: string }).error_code).toBe('MissingScope');
    const removed = await fetch(`${api.baseUrl}/files/mine.gcode`, {
      method: 'DELETE',
      headers: { 'x-api-key': printKey },
    });
    expect(removed.status).toBe(204);
    const gone = await fetch(`${api.baseUrl}/files/mine.gcode/print`, {
      method: 'POST',
      headers: { 'x-api-key': printKey },
    });
    expect(gone.status).toBe(404);
  });

  it('OrcaSlicer: the same sequence with a plateindex field, to a base URL without a trailing slash', async () => {
    const { version, upload } = await curlSlicerSequence(api.baseUrl, {
      userAgent: 'OrcaSlicer/2.3.0',
      base: `${api.baseUrl}/octoprint/sim`,
      key: printKey,
      fileName: '3DBenchy_PLA_1h2m.gcode',
      print: false,
      plateIndex: '1',
    });
    expect(curlSlicerAcceptsVersion(version)).toBe(true);
    expect(upload.status).toBe(201);
    expect(upload.headers.location).toBe(
      `${api.baseUrl}/octoprint/sim/api/files/local/3DBenchy_PLA_1h2m.gcode`,
    );
  });

  it('refuses slicers without the right key: 403 for none, a wrong one or a read-only key (as OctoPrint), and stores nothing', async () => {
    const none = await rawRequest(api.baseUrl, {
      method: 'GET',
      target: '/octoprint/sim/api/version',
      headers: [
        ['Host', new URL(api.baseUrl).host],
        ['User-Agent', 'PrusaSlicer/2.8.1'],
        ['Accept', '*/*'],
        ['X-Api-Key', ''],
      ],
    });
    expect(none.status).toBe(403);
    expect(curlSlicerAcceptsVersion(none)).toBe(false);
    const wrong = await curlSlicerSequence(api.baseUrl, {
      userAgent: 'PrusaSlicer/2.8.1',
      base: `${api.baseUrl}/octoprint/sim`,
      key: 'not-a-key',
      fileName: 'x.gcode',
      print: false,
    });
    expect(wrong.version.status).toBe(403);
    expect(wrong.upload.status).toBe(403);
    // A read key passes the connection test (any valid key does) but may not upload.
    const readOnly = await curlSlicerSequence(api.baseUrl, {
      userAgent: 'PrusaSlicer/2.8.1',
      base: `${api.baseUrl}/octoprint/sim`,
      key: readKey,
      fileName: 'refused.gcode',
      print: true,
    });
    expect(readOnly.version.status).toBe(200);
    expect(readOnly.upload.status).toBe(403);
    expect(JSON.parse(readOnly.upload.body).error).toBe(
      'the API key "viewer" lacks the "print" scope needed for POST /octoprint/{target}/api/files/local',
    );
    const stored = (await getJsonWithKey('/files', readKey)) as unknown as { name: string }[];
    expect(stored.map((f) => f.name)).not.toContain('refused.gcode');
  });

  it('answers 404 for a machine that is not configured', async () => {
    const res = await fetch(`${api.baseUrl}/octoprint/nope/api/version`, {
      headers: { 'x-api-key': printKey },
    });
    expect(res.status).toBe(404);
  });

  it('Cura (OctoPrint plugin): key test, polling, upload with Location, then the select command', async () => {
    const host = new URL(api.baseUrl).host;
    const base = '/octoprint/sim/';
    const qtHeaders = (extra: [string, string][] = []): [string, string][] => [
      ['Host', host],
      ['X-Api-Key', printKey],
      ['User-Agent', 'Cura/5.8.1 OctoPrintPlugin/3.7.3'],
      ...extra,
      ['Connection', 'Keep-Alive'],
      ['Accept-Encoding', 'gzip, deflate'],
      ['Accept-Language', 'en-US,*'],
    ];
    // DiscoverOctoPrintAction.testApiKey: 200 means accepted; reads feature.sdSupport, webcam.streamUrl, plugins.
    const settings = await rawRequest(api.baseUrl, {
      method: 'GET',
      target: `${base}api/settings`,
      headers: qtHeaders([['Content-Type', 'application/json']]),
    });
    expect(settings.status).toBe(200);
    const settingsJson = JSON.parse(settings.body);
    expect(settingsJson.feature.sdSupport).toBe(false);
    expect(settingsJson.webcam.streamUrl).toBe('');
    // No UltimakerPackageFormat: Cura uploads plain G-code.
    expect(Object.keys(settingsJson.plugins)).toEqual(['discovery']);
    expect(settingsJson.gcodeAnalysis).toBeUndefined();
    const version = JSON.parse(
      (await rawRequest(api.baseUrl, { method: 'GET', target: `${base}api/version`, headers: qtHeaders() }))
        .body,
    );
    expect(version.server).toBe('1.10.0');
    const login = await rawRequest(api.baseUrl, {
      method: 'POST',
      target: `${base}api/login`,
      headers: qtHeaders([['Content-Type', 'application/json']]),
      body: Buffer.from('{"passive": true}'),
    });
    expect(login.status).toBe(200);
    expect(JSON.parse(login.body).name).toBe('prusa-slicer');
    const profiles = JSON.parse(
      (
        await rawRequest(api.baseUrl, {
          method: 'GET',
          target: `${base}api/printerprofiles`,
          headers: qtHeaders(),
        })
      ).body,
    );
    expect(
      Object.values(profiles.profiles as Record<string, { current: boolean; name: string }>)[0],
    ).toMatchObject({ current: true, name: 'sim' });
    // Polling: api/printer 200 with flags → "idle" when ready/operational; api/job with a state string.
    const printer = await rawRequest(api.baseUrl, {
      method: 'GET',
      target: `${base}api/printer`,
      headers: qtHeaders(),
    });
    expect(printer.status).toBe(200);
    const flags = JSON.parse(printer.body).state.flags;
    expect(flags).toMatchObject({
      error: false,
      closedOrError: false,
      paused: false,
      pausing: false,
      printing: false,
      cancelling: false,
      ready: true,
      operational: true,
    });
    const job = JSON.parse(
      (await rawRequest(api.baseUrl, { method: 'GET', target: `${base}api/job`, headers: qtHeaders() })).body,
    );
    expect(job.state).toBe('Operational');
    expect(job.job.file.name).toBeNull();
    expect(job.progress).toMatchObject({ completion: null, printTime: null, printTimeLeft: null });

    // _sendPrintJob with auto-print and no analysis wait: path, file, select, print (Qt multipart).
    const fileName = 'CE3_benchy two.gcode';
    const form = qtMultipart([
      { disposition: 'form-data; name="path"', contentType: 'text/plain', data: Buffer.from('') },
      {
        disposition: `form-data; name="file"; filename="${fileName}"`,
        contentType: 'application/octet-stream',
        data: GCODE,
      },
      { disposition: 'form-data; name="select"', contentType: 'text/plain', data: Buffer.from('true') },
      { disposition: 'form-data; name="print"', contentType: 'text/plain', data: Buffer.from('false') },
    ]);
    const upload = await rawRequest(api.baseUrl, {
      method: 'POST',
      target: `${base}api/files/local`,
      headers: qtHeaders([
        ['Content-Type', form.contentType],
        ['MIME-Version', '1.0'],
      ]),
      body: form.body,
    });
    expect(upload.status).toBe(201);
    // _onUploadFinished: the end point is what follows "api/" in Location.
    const endPoint = upload.headers.location?.split('api/', 2)[1];
    expect(endPoint).toBe('files/local/CE3_benchy%20two.gcode');
    // _selectAndPrint posts {"command": "select", "print": true} to it and expects 204.
    const select = await rawRequest(api.baseUrl, {
      method: 'POST',
      target: `${base}api/${endPoint}`,
      headers: qtHeaders([['Content-Type', 'application/json']]),
      body: Buffer.from(JSON.stringify({ command: 'select', print: true })),
    });
    expect(select.status).toBe(204);
    const started = (await jobs(printKey))[0] as Record<string, unknown>;
    expect(started).toMatchObject({
      machine_id: 'sim',
      file_name: 'CE3_benchy two.gcode',
      status: 'printing',
      owner: 'prusa-slicer',
    });
    const busy = await rawRequest(api.baseUrl, {
      method: 'GET',
      target: `${base}api/printer`,
      headers: qtHeaders(),
    });
    expect(JSON.parse(busy.body).state.flags).toMatchObject({ printing: true, ready: false });
    await fetch(`${api.baseUrl}/jobs/${started.id}/cancel`, {
      method: 'POST',
      headers: { 'x-api-key': printKey },
    });
    await waitFor(async () => (await getJsonWithKey(`/jobs/${started.id}`, printKey)).status === 'cancelled');
  });

  it('the queue base takes constraints from its query, as slicers append to it', async () => {
    const { version, upload } = await curlSlicerSequence(api.baseUrl, {
      userAgent: 'PrusaSlicer/2.8.1',
      base: `${api.baseUrl}/octoprint/queue/?material=petg`,
      key: printKey,
      fileName: 'petg part.gcode',
      print: false,
    });
    expect(curlSlicerAcceptsVersion(version)).toBe(true);
    expect(upload.status).toBe(201);
    const stored = (await getJsonWithKey('/files', printKey)) as unknown as Record<string, unknown>[];
    expect(stored).toContainEqual(
      expect.objectContaining({
        name: 'petg part.gcode',
        machine_id: null,
        queue_constraints: { material: 'petg' },
      }),
    );
    for (const query of [
      'colour=red',
      'material=unobtainium',
      'nozzle_diameter=wide',
      'machine_type=Laser',
    ]) {
      const bad = await fetch(`${api.baseUrl}/octoprint/queue/api/version?${query}`, {
        headers: { 'x-api-key': printKey },
      });
      expect(bad.status, query).toBe(400);
    }
  });

  it('"Upload and print" to the queue base queues the job with the constraints; a matching machine prints it', async () => {
    const { upload } = await curlSlicerSequence(api.baseUrl, {
      userAgent: 'PrusaSlicer/2.8.1',
      base: `${api.baseUrl}/octoprint/queue/?material=petg`,
      key: printKey,
      fileName: 'petg clip.gcode',
      print: true,
    });
    expect(upload.status).toBe(201);
    const body = JSON.parse(upload.body) as { job_id: string; effectivePrint: boolean };
    expect(body.effectivePrint).toBe(true);
    const job = await waitFor(async () => {
      const current = await getJsonWithKey(`/jobs/${body.job_id}`, printKey);
      return current.status === 'printing' && current;
    });
    expect(job).toMatchObject({ machine_id: 'petg', job_name: 'petg clip', owner: 'prusa-slicer' });
    await fetch(`${api.baseUrl}/jobs/${body.job_id}/cancel`, {
      method: 'POST',
      headers: { 'x-api-key': printKey },
    });
    await waitFor(
      async () => (await getJsonWithKey(`/jobs/${body.job_id}`, printKey)).status === 'cancelled',
    );
  });

  it('refuses unsafe stored names and changes nothing', async () => {
    for (const path of ['..', 'a/../..']) {
      const { upload } = await curlSlicerSequence(api.baseUrl, {
        userAgent: 'PrusaSlicer/2.8.1',
        base: `${api.baseUrl}/octoprint/sim`,
        key: printKey,
        fileName: 'evil.gcode',
        path,
        print: false,
      });
      expect(upload.status).toBe(400);
    }
    const stored = (await getJsonWithKey('/files', printKey)) as unknown as { name: string }[];
    expect(stored.map((f) => f.name)).not.toContain('evil.gcode');
  });
});
