/**
 * Home Assistant and the OctoPrint phone apps against the OctoPrint bases: each client's own request
 * sequence replayed as it sends it (Home Assistant's integration through pyoctoprintapi 0.1.14:
 * `api.py`, `octoprint_client.py`; OctoPod: `OctoPrintRESTClient.swift`, `OctoPrintClient.swift`,
 * `WebSocketClient.swift`), asserting every field they read; the Application Keys flow with its approval;
 * hostile input on the new routes.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKeysCommand } from '../src/keys-command.js';
import { type MachineApiUnderTest, startMachineApi, waitFor } from './harness.js';

async function createKey(dataDir: string, name: string, scope: string): Promise<string> {
  let out = '';
  await runKeysCommand(['create'], { dataDir, name, scope, out: (text) => (out += text) });
  return out.split('\n')[0] as string;
}

const CONFIG = `
[server]
auth = "keys"

[machines.sim]
type = "Noop"
print_seconds = 600

[machines.spare]
type = "Noop"
print_seconds = 600
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
  let adminKey: string;
  let readKey: string;

  beforeAll(async () => {
    api = await startMachineApi(CONFIG);
    adminKey = await createKey(api.dataDir, 'admin', 'admin');
    readKey = await createKey(api.dataDir, 'viewer', 'read');
  });
  afterAll(() => api.close());

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
});
