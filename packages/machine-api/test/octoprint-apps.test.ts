/**
 * Home Assistant and the OctoPrint phone apps against the OctoPrint bases: each client's own request
 * sequence replayed as it sends it (Home Assistant's integration through pyoctoprintapi 0.1.14:
 * `api.py`, `octoprint_client.py`; OctoPod: `OctoPrintRESTClient.swift`, `OctoPrintClient.swift`,
 * `WebSocketClient.swift`), asserting every field they read; the Application Keys flow with its approval;
 * hostile input on the new routes.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKeysCommand } from '../src/keys-command.js';
import { decodeJpeg } from './camera-frames.js';
import { type MachineApiUnderTest, startMachineApi, waitFor } from './harness.js';
import { HttpCamera } from './sim/http-camera.js';

const GCODE = ';FLAVOR:Marlin\nG28\nG1 Z5 F5000\n'.repeat(200);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function createKey(dataDir: string, name: string, scope: string): Promise<string> {
  let out = '';
  await runKeysCommand(['create'], { dataDir, name, scope, out: (text) => (out += text) });
  return out.split('\n')[0] as string;
}

const config = (cameraUrl: string) => `
[server]
auth = "keys"

[machines.sim]
type = "Noop"
print_seconds = 600
camera = { snapshot_url = "${cameraUrl}/snapshot.jpg", stream_url = "${cameraUrl}/stream.mjpg" }

[machines.spare]
type = "Noop"
print_seconds = 600

[machines.down]
type = "Noop"
state = { state = "offline" }
`;

/** What aiohttp sends for pyoctoprintapi: its own User-Agent, JSON bodies with their content type. */
function haRequest(
  url: string,
  options: { method?: string; key?: string; json?: unknown } = {},
): Promise<Response> {
  const headers: Record<string, string> = { 'user-agent': 'HomeAssistant/2025.1 aiohttp/3.11.11' };
  if (options.key) headers['x-api-key'] = options.key;
  if (options.json !== undefined) headers['content-type'] = 'application/json';
  return fetch(url, {
    method: options.method ?? 'GET',
    headers,
    body: options.json === undefined ? undefined : JSON.stringify(options.json),
    redirect: 'manual',
  });
}

describe('Home Assistant and the phone apps (OctoPrint bases)', () => {
  let api: MachineApiUnderTest;
  let camera: HttpCamera;
  let adminKey: string;
  let readKey: string;
  let printKey: string;

  beforeAll(async () => {
    camera = await HttpCamera.start();
    api = await startMachineApi(config(camera.url));
    adminKey = await createKey(api.dataDir, 'admin', 'admin');
    readKey = await createKey(api.dataDir, 'viewer', 'read');
    printKey = await createKey(api.dataDir, 'slicer', 'print');
  });
  afterAll(async () => {
    await api.close();
    await camera.close();
  });

  /** A print started as a slicer starts one (OctoPrint upload with print=true). */
  async function startPrint(machine: string, fileName: string): Promise<string> {
    const form = new FormData();
    form.append('print', 'true');
    form.append('file', new Blob([GCODE]), fileName);
    const res = await fetch(`${api.baseUrl}/octoprint/${machine}/api/files/local`, {
      method: 'POST',
      headers: { 'x-api-key': printKey },
      body: form,
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { job_id: string }).job_id;
  }

  const admin = (path: string, init: { method?: string; json?: unknown } = {}) =>
    haRequest(`${api.baseUrl}${path}`, { ...init, key: adminKey });

  /** Home Assistant's config flow: probe, request, poll until an administrator approves; the key. */
  async function homeAssistantConfigFlow(base: string): Promise<string> {
    // OctoprintClient.request_app_key: check_appkeys_enabled, appkeys_start_auth, appkeys_check_status…
    const probe = await haRequest(`${base}plugin/appkeys/probe`);
    expect(probe.status).toBe(204);
    const started = await haRequest(`${base}plugin/appkeys/request`, {
      method: 'POST',
      json: { app: 'Home Assistant', user: 'admin' },
    });
    expect(started.status).toBe(201);
    const location = started.headers.get('location') as string;
    expect(location).toMatch(new RegExp(`^${base}plugin/appkeys/request/[A-Za-z0-9_-]{43}$`));
    const appToken = location.slice(location.lastIndexOf('/') + 1);
    expect(await started.json()).toEqual({ app_token: appToken });
    const poll = () => haRequest(`${base}plugin/appkeys/request/${appToken}`);
    const pending = await poll();
    expect(pending.status).toBe(202);
    expect(pending.headers.get('content-type')).toMatch(/^application\/json/);
    const waiting = (await pending.json()) as Record<string, unknown>;
    expect('api_key' in waiting).toBe(false);
    expect(waiting).toEqual({ message: 'Awaiting decision' });
    // The administrator sees the request and approves it (default scopes read + control).
    const listed = (await (await admin('/keys/requests')).json()) as Record<string, unknown>[];
    const request = listed.find((entry) => entry.app === 'Home Assistant');
    expect(request).toMatchObject({ app: 'Home Assistant', user: 'admin', machine_id: 'sim' });
    const approved = await admin(`/keys/requests/${request?.id}/approve`, { method: 'POST', json: {} });
    expect(approved.status).toBe(200);
    expect(await approved.json()).toMatchObject({ name: 'Home-Assistant', scopes: ['read', 'control'] });
    const decided = await poll();
    expect(decided.status).toBe(200);
    const { api_key } = (await decided.json()) as { api_key: string };
    expect(api_key).toMatch(/^mapi_/);
    // Handed out once: the next poll finds nothing.
    expect((await poll()).status).toBe(404);
    return api_key;
  }

  it('Home Assistant: the config flow gets a key through the Application Keys flow and an approval', async () => {
    const base = `${api.baseUrl}/octoprint/sim/`;
    const key = await homeAssistantConfigFlow(base);
    const keys = (await (await admin('/keys')).json()) as { name: string; scopes: string[] }[];
    expect(keys.find((entry) => entry.name === 'Home-Assistant')).toMatchObject({
      scopes: ['read', 'control'],
    });
    const job = await haRequest(`${base}api/job`, { key });
    expect(job.status).toBe(200);
    // Revocable like any key: Home Assistant then gets 403 and starts re-authentication.
    expect((await admin('/keys/Home-Assistant', { method: 'DELETE' })).status).toBe(204);
    const refused = await haRequest(`${base}api/job`, { key });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ error: 'the API key is not valid (unknown or revoked)' });
  });

  it('a denied request answers 404 to the app, and only an admin decides', async () => {
    const base = `${api.baseUrl}/octoprint/spare/`;
    const started = await haRequest(`${base}plugin/appkeys/request`, {
      method: 'POST',
      json: { app: 'OctoPod' },
    });
    const token = (await started.json()) as { app_token: string };
    const listed = (await (await admin('/keys/requests')).json()) as { id: string; app: string }[];
    const id = listed.find((entry) => entry.app === 'OctoPod')?.id as string;
    const byReader = await haRequest(`${api.baseUrl}/keys/requests/${id}/approve`, {
      method: 'POST',
      key: readKey,
      json: {},
    });
    expect(byReader.status).toBe(403);
    expect((await admin(`/keys/requests/${id}/deny`, { method: 'POST' })).status).toBe(204);
    const poll = await haRequest(`${base}plugin/appkeys/request/${token.app_token}`);
    expect(poll.status).toBe(404);
    expect(await poll.json()).toEqual({
      error: 'no such key request: it was denied, has expired, or its key was already fetched',
    });
    expect((await admin(`/keys/requests/${id}/approve`, { method: 'POST', json: {} })).status).toBe(404);
    const keys = (await (await admin('/keys')).json()) as { name: string }[];
    expect(keys.map((entry) => entry.name)).not.toContain('OctoPod');
  });

  it('Home Assistant: settings give a stable device id and token-carrying camera URLs it opens without its key', async () => {
    const base = `${api.baseUrl}/octoprint/sim/`;
    const settings = await haRequest(`${base}api/settings`, { key: readKey });
    expect(settings.status).toBe(200);
    const body = (await settings.json()) as {
      plugins: { discovery: { upnpUuid: string } };
      webcam: { webcamEnabled: boolean; streamUrl: string; snapshotUrl: string };
    };
    // get_discovery_info().upnp_uuid: the config flow's unique id.
    expect(body.plugins.discovery.upnpUuid).toMatch(UUID);
    const spare = (await (
      await haRequest(`${api.baseUrl}/octoprint/spare/api/settings`, { key: readKey })
    ).json()) as typeof body;
    expect(spare.plugins.discovery.upnpUuid).toMatch(UUID);
    expect(spare.plugins.discovery.upnpUuid).not.toBe(body.plugins.discovery.upnpUuid);
    expect(spare.webcam).toMatchObject({ webcamEnabled: false, streamUrl: '', snapshotUrl: '' });
    // get_webcam_info(): enabled, stream_url (absolute: used as it is), external_snapshot_url.
    expect(body.webcam.webcamEnabled).toBe(true);
    expect(body.webcam.streamUrl).toMatch(
      new RegExp(`^${base}webcam/\\?token=[A-Za-z0-9_-]{43}&action=stream$`),
    );
    const snapshotUrl = new URL(body.webcam.streamUrl);
    snapshotUrl.searchParams.set('action', 'snapshot');
    expect(snapshotUrl.href).toBe(body.webcam.snapshotUrl);
    const still = await fetch(snapshotUrl);
    expect(still.status).toBe(200);
    expect(still.headers.get('content-type')).toBe('image/jpeg');
    expect(decodeJpeg(Buffer.from(await still.arrayBuffer()))).toEqual({ width: 64, height: 48 });
    const stream = await fetch(body.webcam.streamUrl);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^multipart\/x-mixed-replace/);
    await stream.body?.cancel();
    // The token opens only its own machine's camera, and nothing else.
    const token = snapshotUrl.searchParams.get('token') as string;
    const elsewhere = await fetch(`${api.baseUrl}/octoprint/spare/webcam/?action=snapshot&token=${token}`);
    expect(elsewhere.status).toBe(403);
    expect(await elsewhere.json()).toEqual({ error: 'the camera token is not valid (unknown or revoked)' });
    expect((await fetch(`${api.baseUrl}/machines/sim/snapshot?token=${token}`)).status).toBe(401);
    expect((await fetch(`${base}api/job?token=${token}`)).status).toBe(403);
    // A key without read is not told the camera URLs.
    const printOnly = (await (
      await haRequest(`${base}api/settings`, { key: printKey })
    ).json()) as typeof body;
    expect(printOnly.webcam.webcamEnabled).toBe(false);
    // Revoked: the old URL stops working, settings hand out a new one.
    expect((await admin('/machines/sim/camera-token', { method: 'DELETE' })).status).toBe(204);
    expect((await fetch(snapshotUrl)).status).toBe(403);
    const renewed = (await (await haRequest(`${base}api/settings`, { key: readKey })).json()) as typeof body;
    expect(renewed.webcam.snapshotUrl).not.toBe(body.webcam.snapshotUrl);
    expect((await fetch(renewed.webcam.snapshotUrl)).status).toBe(200);
    expect(renewed.plugins.discovery.upnpUuid).toBe(body.plugins.discovery.upnpUuid);
  });

  it('Home Assistant: its 30-second poll reads the printer and the job through a print, then pauses, resumes and cancels it', async () => {
    const base = `${api.baseUrl}/octoprint/sim/`;
    const key = await createKey(api.dataDir, 'ha-poll', 'read,control');
    // OctoprintDataUpdateCoordinator: get_printer_info, then get_job_info.
    const idlePrinter = await haRequest(`${base}api/printer`, { key });
    expect(idlePrinter.status).toBe(200);
    const idle = (await idlePrinter.json()) as Record<string, any>;
    expect(idle.state).toEqual({
      text: 'Operational',
      flags: {
        operational: true,
        printing: false,
        paused: false,
        pausing: false,
        cancelling: false,
        resuming: false,
        finishing: false,
        sdReady: false,
        error: false,
        ready: true,
        closedOrError: false,
      },
    });
    expect(Object.keys(idle.temperature).sort()).toEqual(['bed', 'tool0']);
    for (const sensor of ['bed', 'tool0']) {
      expect(idle.temperature[sensor]).toEqual({
        actual: expect.any(Number),
        target: idle.temperature[sensor].target,
        offset: 0,
      });
    }
    const idleJob = (await (await haRequest(`${base}api/job`, { key })).json()) as Record<string, any>;
    expect(idleJob).toEqual({
      job: {
        file: { name: null, path: null, display: null, origin: null, size: null, date: null },
        estimatedPrintTime: null,
        averagePrintTime: null,
        lastPrintTime: null,
        filament: null,
        user: null,
      },
      progress: {
        completion: null,
        filepos: null,
        printTime: null,
        printTimeLeft: null,
        printTimeLeftOrigin: null,
      },
      state: 'Operational',
    });

    const jobId = await startPrint('sim', 'benchy.gcode');
    const printing = (await (await haRequest(`${base}api/printer`, { key })).json()) as Record<string, any>;
    expect(printing.state.text).toBe('Printing');
    expect(printing.state.flags).toMatchObject({
      printing: true,
      operational: true,
      ready: false,
      paused: false,
    });
    expect(printing.temperature.tool0).toEqual({ actual: 210, target: 210, offset: 0 });
    expect(printing.temperature.bed).toEqual({ actual: 60, target: 60, offset: 0 });
    const job = (await (await haRequest(`${base}api/job`, { key })).json()) as Record<string, any>;
    expect(job.state).toBe('Printing');
    expect(job.job.file).toMatchObject({ name: 'benchy.gcode', origin: 'local', size: GCODE.length });
    expect(job.job.user).toBe('slicer');
    expect(job.progress.completion).toEqual(expect.any(Number));
    expect(job.progress.printTime).toEqual(expect.any(Number));

    // The pause, resume and stop buttons: issue_job_command.
    const pause = await haRequest(`${base}api/job`, {
      method: 'POST',
      key,
      json: { command: 'pause', action: 'pause' },
    });
    expect(pause.status).toBe(204);
    await waitFor(
      async () =>
        ((await (await haRequest(`${base}api/printer`, { key })).json()) as any).state.text === 'Paused',
    );
    const pausedJob = (await (await haRequest(`${base}api/job`, { key })).json()) as Record<string, any>;
    expect(pausedJob.state).toBe('Paused');
    const resume = await haRequest(`${base}api/job`, {
      method: 'POST',
      key,
      json: { command: 'pause', action: 'resume' },
    });
    expect(resume.status).toBe(204);
    await waitFor(
      async () =>
        ((await (await haRequest(`${base}api/printer`, { key })).json()) as any).state.text === 'Printing',
    );
    // A read key may watch but not act, as on POST /machines/{id}/pause.
    const refused = await haRequest(`${base}api/job`, {
      method: 'POST',
      key: readKey,
      json: { command: 'cancel' },
    });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({
      error: 'the API key "viewer" lacks the "control" scope needed for POST /octoprint/{target}/api/job',
    });
    const cancel = await haRequest(`${base}api/job`, { method: 'POST', key, json: { command: 'cancel' } });
    expect(cancel.status).toBe(204);
    await waitFor(async () => ((await (await admin(`/jobs/${jobId}`)).json()) as any).status === 'cancelled');
    const again = await haRequest(`${base}api/job`, {
      method: 'POST',
      key,
      json: { command: 'pause', action: 'toggle' },
    });
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({ error: expect.any(String) });
  });

  it('an offline machine: api/printer 409 {"error"}, api/job 200 with state Offline', async () => {
    const base = `${api.baseUrl}/octoprint/down/`;
    const printer = await haRequest(`${base}api/printer`, { key: readKey });
    expect(printer.status).toBe(409);
    expect(await printer.json()).toEqual({ error: 'Printer is not operational' });
    const job = await haRequest(`${base}api/job`, { key: readKey });
    expect(job.status).toBe(200);
    expect(((await job.json()) as { state: string }).state).toBe('Offline');
  });
});
