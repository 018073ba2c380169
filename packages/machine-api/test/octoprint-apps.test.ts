/**
 * Home Assistant and the OctoPrint phone apps against the OctoPrint bases: each client's own request
 * sequence replayed as it sends it (Home Assistant's integration through pyoctoprintapi 0.1.14:
 * `api.py`, `octoprint_client.py`; OctoPod: `OctoPrintRESTClient.swift`, `OctoPrintClient.swift`,
 * `WebSocketClient.swift`), asserting every field they read; the Application Keys flow with its approval;
 * hostile input on the new routes.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { runKeysCommand } from '../src/keys-command.js';
import { decodeJpeg } from './camera-frames.js';
import { type MachineApiUnderTest, startMachineApi, waitFor } from './harness.js';
import { HttpCamera } from './sim/http-camera.js';

// biome-ignore lint/suspicious/noExplicitAny: the answers' JSON is read field by field, as the clients do.
type Json = any;

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

/** A push-channel client as OctoPod's WebSocketClient: collects every JSON message it receives. */
class PushClient {
  readonly messages: Json[] = [];
  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => this.messages.push(JSON.parse(data.toString())));
  }

  static async open(url: string): Promise<PushClient> {
    const socket = new WebSocket(url);
    const client = new PushClient(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return client;
  }

  current(): Json[] {
    return this.messages.filter((message) => 'current' in message).map((message) => message.current);
  }

  auth(text: string): void {
    this.socket.send(JSON.stringify({ auth: text }));
  }

  close(): void {
    this.socket.close();
  }
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
    const idle = (await idlePrinter.json()) as Json;
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
    // The key also works as `Authorization: Bearer`, as OctoPrint accepts it.
    const bearer = await fetch(`${base}api/printer`, { headers: { authorization: `Bearer ${key}` } });
    expect(bearer.status).toBe(200);
    const idleJob = (await (await haRequest(`${base}api/job`, { key })).json()) as Json;
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
    const printing = (await (await haRequest(`${base}api/printer`, { key })).json()) as Json;
    expect(printing.state.text).toBe('Printing');
    expect(printing.state.flags).toMatchObject({
      printing: true,
      operational: true,
      ready: false,
      paused: false,
    });
    expect(printing.temperature.tool0).toEqual({ actual: 210, target: 210, offset: 0 });
    expect(printing.temperature.bed).toEqual({ actual: 60, target: 60, offset: 0 });
    const job = (await (await haRequest(`${base}api/job`, { key })).json()) as Json;
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
        ((await (await haRequest(`${base}api/printer`, { key })).json()) as Json).state.text === 'Paused',
    );
    const pausedJob = (await (await haRequest(`${base}api/job`, { key })).json()) as Json;
    expect(pausedJob.state).toBe('Paused');
    const resume = await haRequest(`${base}api/job`, {
      method: 'POST',
      key,
      json: { command: 'pause', action: 'resume' },
    });
    expect(resume.status).toBe(204);
    await waitFor(
      async () =>
        ((await (await haRequest(`${base}api/printer`, { key })).json()) as Json).state.text === 'Printing',
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
    await waitFor(
      async () => ((await (await admin(`/jobs/${jobId}`)).json()) as Json).status === 'cancelled',
    );
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

  it('Home Assistant: its temperature calls (with the double slash pyoctoprintapi sends) set the heaters within the limits', async () => {
    const base = `${api.baseUrl}/octoprint/spare/`;
    const key = await createKey(api.dataDir, 'ha-heat', 'read,control');
    // set_bed_temperature: f"{base_url}/{BED_ENDPOINT}", so `…/spare//api/printer/bed`.
    const bed = await haRequest(`${base}/api/printer/bed`, {
      method: 'POST',
      key,
      json: { command: 'target', target: 60, offset: 0 },
    });
    expect(bed.status).toBe(204);
    // set_tool_temperature: issue_tool_command("target", targets={tool: target}).
    const tool = await haRequest(`${base}api/printer/tool`, {
      method: 'POST',
      key,
      json: { command: 'target', targets: { tool0: 215 } },
    });
    expect(tool.status).toBe(204);
    const printer = (await (await haRequest(`${base}api/printer`, { key })).json()) as Json;
    expect(printer.temperature.bed.target).toBe(60);
    expect(printer.temperature.tool0.target).toBe(215);
    // Above max_tool_temp (default 300) / max_bed_temp (120): 400, and nothing changes.
    const tooHot = await haRequest(`${base}api/printer/tool`, {
      method: 'POST',
      key,
      json: { command: 'target', targets: { tool0: 301 } },
    });
    expect(tooHot.status).toBe(400);
    expect(await tooHot.json()).toEqual({ error: expect.stringContaining('max_tool_temp') });
    const bedTooHot = await haRequest(`${base}api/printer/bed`, {
      method: 'POST',
      key,
      json: { command: 'target', target: 121 },
    });
    expect(bedTooHot.status).toBe(400);
    const after = (await (await haRequest(`${base}api/printer`, { key })).json()) as Json;
    expect(after.temperature.bed.target).toBe(60);
    expect(after.temperature.tool0.target).toBe(215);
    // turn_tool_off / turn_bed_off.
    expect(
      (
        await haRequest(`${base}api/printer/tool`, {
          method: 'POST',
          key,
          json: { command: 'target', targets: { tool0: 0 } },
        })
      ).status,
    ).toBe(204);
    expect(
      (
        await haRequest(`${base}/api/printer/bed`, {
          method: 'POST',
          key,
          json: { command: 'target', target: 0, offset: 0 },
        })
      ).status,
    ).toBe(204);
    // The restart, reboot and shutdown buttons: `…//api/system/commands/core/restart` routes, and says no.
    const restart = await haRequest(`${base}/api/system/commands/core/restart`, { method: 'POST', key });
    expect(restart.status).toBe(404);
    expect(await restart.json()).toEqual({
      error: 'Command core:restart not found: machine-api runs no system commands',
    });
  });

  it('OctoPod: its start-up sequence, then the push channel follows a print', async () => {
    const base = `${api.baseUrl}/octoprint/spare`;
    const key = await createKey(api.dataDir, 'OctoPod', 'read,control');
    const get = (path: string) => haRequest(`${base}${path}`, { key });
    // connectToServer: the websocket first, then printerState, settings, version.
    const push = await PushClient.open(`${base.replace('http', 'ws')}/sockjs/websocket`);
    const printer = await get('/api/printer');
    expect(printer.status).toBe(200);
    const printerJson = (await printer.json()) as Json;
    expect(printerJson.temperature.tool0).toEqual({
      actual: expect.any(Number),
      target: expect.any(Number),
      offset: 0,
    });
    expect(printerJson.state.flags).toMatchObject({
      operational: true,
      paused: false,
      printing: false,
      pausing: false,
      cancelling: false,
      closedOrError: false,
    });
    const settings = (await (await get('/api/settings')).json()) as Json;
    expect(settings.feature.sdSupport).toBe(false);
    expect(settings.webcam).toMatchObject({
      webcamEnabled: false,
      flipH: false,
      flipV: false,
      rotate90: false,
      streamRatio: '16:9',
    });
    const profiles = (await (await get('/api/printerprofiles')).json()) as Json;
    expect(profiles.profiles._default).toMatchObject({ id: '_default', current: true, heatedBed: true });
    const version = (await (await get('/api/version')).json()) as Json;
    expect(version.server).toBe('1.10.0');
    const connection = (await (await get('/api/connection')).json()) as Json;
    expect(connection.current).toEqual({
      state: 'Operational',
      port: 'spare',
      baudrate: null,
      printerProfile: '_default',
    });
    const commands = (await (await get('/api/system/commands')).json()) as Json;
    expect(commands).toEqual({ core: [], custom: [] });
    const files = (await (await get('/api/files?recursive=true')).json()) as Json;
    expect(files).toEqual({ files: [], free: null, total: null });
    // websocketConnected: `connected` arrived, then a passive login gives name and session for `auth`.
    await waitFor(() => push.messages.length > 0);
    expect(push.messages[0]).toMatchObject({ connected: { version: '1.10.0' } });
    const login = await haRequest(`${base}/api/login`, { method: 'POST', key, json: { passive: true } });
    expect(login.status).toBe(200);
    const user = (await login.json()) as { name: string; session: string };
    expect(user.name).toBe('OctoPod');
    expect(user.session).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // A wrong session gets nothing, however long the right one is fed.
    const stranger = await PushClient.open(`${base.replace('http', 'ws')}/sockjs/websocket`);
    stranger.auth(`OctoPod:${'x'.repeat(43)}`);
    const impostor = await PushClient.open(`${base.replace('http', 'ws')}/sockjs/websocket`);
    impostor.auth(`admin:${user.session}`);
    push.auth(`${user.name}:${user.session}`);
    await waitFor(() => push.current().length > 0);
    const idle = push.current()[0] as Json;
    expect(idle.state.text).toBe('Operational');
    expect(idle.temps[0]).toMatchObject({
      time: expect.any(Number),
      tool0: { actual: expect.any(Number) },
      bed: { actual: expect.any(Number) },
    });
    expect(idle.progress).toMatchObject({ completion: null, printTime: null, printTimeLeft: null });

    const jobId = await startPrint('spare', 'clip.gcode');
    const printing = await waitFor(() => push.current().find((frame) => frame.state.text === 'Printing'));
    expect(printing.state.flags).toMatchObject({ printing: true, operational: true, closedOrError: false });
    expect(printing.job.file).toMatchObject({ name: 'clip.gcode', origin: 'local', size: GCODE.length });
    expect(printing.progress.completion).toEqual(expect.any(Number));
    expect(printing.progress.printTime).toEqual(expect.any(Number));
    expect(printing.temps[0]).toMatchObject({
      tool0: { actual: 210, target: 210 },
      bed: { actual: 60, target: 60 },
    });
    // OctoPod's pause and cancel buttons.
    expect(
      (
        await haRequest(`${base}/api/job`, {
          method: 'POST',
          key,
          json: { command: 'pause', action: 'pause' },
        })
      ).status,
    ).toBe(204);
    await waitFor(() => push.current().find((frame) => frame.state.text === 'Paused'));
    expect(
      (await haRequest(`${base}/api/job`, { method: 'POST', key, json: { command: 'cancel' } })).status,
    ).toBe(204);
    await waitFor(
      async () => ((await (await admin(`/jobs/${jobId}`)).json()) as Json).status === 'cancelled',
    );
    const count = push.current().length;
    await waitFor(() =>
      push
        .current()
        .slice(count)
        .find((frame) => frame.state.text === 'Operational'),
    );
    expect(stranger.current()).toEqual([]);
    expect(impostor.current()).toEqual([]);
    expect(stranger.messages).toHaveLength(1);

    // Revoking the key ends what its session sees: a new channel with it gets nothing, while another key's does.
    expect((await admin('/keys/OctoPod', { method: 'DELETE' })).status).toBe(204);
    const revoked = await PushClient.open(`${base.replace('http', 'ws')}/sockjs/websocket`);
    revoked.auth(`${user.name}:${user.session}`);
    const other = await PushClient.open(`${base.replace('http', 'ws')}/sockjs/websocket`);
    const otherLogin = (await (
      await haRequest(`${base}/api/login`, { method: 'POST', key: readKey, json: { passive: true } })
    ).json()) as { name: string; session: string };
    other.auth(`${otherLogin.name}:${otherLogin.session}`);
    await waitFor(() => other.current().length >= 2);
    expect(revoked.current()).toEqual([]);
    for (const client of [push, stranger, impostor, revoked, other]) client.close();
  });

  it('hostile input on the OctoPrint routes: 4xx {"error"} and nothing changes', async () => {
    const base = `${api.baseUrl}/octoprint/spare/`;
    const key = await createKey(api.dataDir, 'hostile', 'read,control');
    const before = (await (await haRequest(`${base}api/printer`, { key })).json()) as Json;
    const requestsBefore = (await (await admin('/keys/requests')).json()) as unknown[];
    const cases: { path: string; body: unknown; raw?: string }[] = [
      { path: 'api/job', body: { command: 'explode' } },
      { path: 'api/job', body: { command: 'pause', action: 1 } },
      { path: 'api/job', body: [] },
      { path: 'api/job', body: null, raw: '{"command":' },
      { path: 'api/printer/tool', body: { command: 'target', targets: { tool0: 'hot' } } },
      { path: 'api/printer/tool', body: { command: 'target', targets: { tool0: -5 } } },
      { path: 'api/printer/tool', body: { command: 'target', targets: { tool1: 200 } } },
      { path: 'api/printer/tool', body: { command: 'target', targets: { tool0: 200, tool1: 200 } } },
      { path: 'api/printer/tool', body: { command: 'offset', offsets: { tool0: 5 } } },
      { path: 'api/printer/bed', body: { command: 'target', target: 1e9 } },
      { path: 'api/printer/bed', body: { command: 'target', target: '60' } },
      { path: 'api/printer/bed', body: { command: 'target' } },
      { path: 'api/printer/bed', body: { command: 'target', target: 50, offset: 3 } },
      { path: 'api/connection', body: { command: 'disconnect' } },
      { path: 'api/connection', body: { command: 'reboot' } },
      { path: 'plugin/appkeys/request', body: { app: 'x'.repeat(101) } },
      { path: 'plugin/appkeys/request', body: { app: 'evil\u0000app' } },
      { path: 'plugin/appkeys/request', body: { app: '   ' } },
      { path: 'plugin/appkeys/request', body: { user: 'nobody' } },
      { path: 'plugin/appkeys/request', body: null, raw: 'app=x' },
    ];
    for (const { path, body, raw } of cases) {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: raw ?? JSON.stringify(body),
      });
      expect(res.status, `${path} ${raw ?? JSON.stringify(body)}`).toBeGreaterThanOrEqual(400);
      expect(res.status, `${path} ${raw ?? JSON.stringify(body)}`).toBeLessThan(500);
      const answer = (await res.json()) as Record<string, unknown>;
      expect(Object.keys(answer), `${path} ${JSON.stringify(answer)}`).toEqual(['error']);
      expect(typeof answer.error).toBe('string');
    }
    const poll = await fetch(`${base}plugin/appkeys/request/${'%00'.repeat(10)}`);
    expect(poll.status).toBe(404);
    expect((await fetch(`${api.baseUrl}/octoprint/nope/plugin/appkeys/probe`)).status).toBe(404);
    const unknownMachine = await fetch(`${api.baseUrl}/octoprint/nope/sockjs/websocket`);
    expect(unknownMachine.status).toBe(404);
    expect(await unknownMachine.json()).toEqual({ error: 'no machine with id "nope"' });
    const after = (await (await haRequest(`${base}api/printer`, { key })).json()) as Json;
    expect(after.temperature).toEqual(before.temperature);
    expect(after.state).toEqual(before.state);
    expect(await (await admin('/keys/requests')).json()).toEqual(requestsBefore);
  });

  it("keeps each machine's upnpUuid across restarts", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'machine-api-uuid-'));
    try {
      const uuidOf = async () => {
        const service = await startMachineApi('[machines.sim]\ntype = "Noop"\n', { dir });
        try {
          const res = await fetch(`${service.baseUrl}/octoprint/sim/api/settings`);
          return ((await res.json()) as { plugins: { discovery: { upnpUuid: string } } }).plugins.discovery
            .upnpUuid;
        } finally {
          await service.close();
        }
      };
      const first = await uuidOf();
      expect(first).toMatch(UUID);
      expect(await uuidOf()).toBe(first);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
