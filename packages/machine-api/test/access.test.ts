/**
 * Access control over real HTTP: scoped API keys (every route × no key, wrong key, each scope), keys
 * managed by the CLI while the server runs (revocation counts at the next request), drive-by protection
 * (a foreign Origin cannot change anything), keys never in the log, the default by bind address.
 */

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKeysCommand } from '../src/keys-command.js';
import { type RunningService, startService } from '../src/service.js';
import { ContractClient } from './contract.js';
import { testDatabaseUrl } from './test-database.js';

const CONFIG = `
[server]
auth = "keys"
allowed_origins = ["https://app.example.com"]

[machines.sim]
type = "Noop"
`;

/** A service with a captured debug log, so tests can grep what it wrote. */
async function startWithLog(toml: string, host = '127.0.0.1') {
  const dir = await mkdtemp(join(tmpdir(), 'machine-api-access-'));
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(String(chunk));
      callback();
    },
  });
  const logger = pino({ level: 'debug' }, sink);
  const configPath = join(dir, 'machine-api.toml');
  await writeFile(configPath, toml);
  const dataDir = join(dir, 'data');
  const databaseUrl = await testDatabaseUrl(dir);
  const service = await startService({
    configPath,
    dataDir,
    databaseUrl,
    host,
    port: 0,
    logger,
    mdnsDefault: false,
  });
  return {
    service,
    dir,
    dataDir,
    databaseUrl,
    log: () => lines.join(''),
    close: async () => {
      await service.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function cli(dataDir: string, args: string[], flags: { name?: string; scope?: string } = {}) {
  let out = '';
  const databaseUrl = await testDatabaseUrl(dirname(dataDir));
  const code = await runKeysCommand(args, { dataDir, databaseUrl, ...flags, out: (text) => (out += text) });
  return { code, out };
}

async function createKey(dataDir: string, name: string, scope: string): Promise<string> {
  const { code, out } = await cli(dataDir, ['create'], { name, scope });
  expect(code).toBe(0);
  const key = out.split('\n')[0] ?? '';
  expect(key).toMatch(/^mapi_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
  return key;
}

type Credential = 'none' | 'wrong' | 'read' | 'print' | 'control' | 'clear' | 'admin';
const CREDENTIALS: Credential[] = ['none', 'wrong', 'read', 'print', 'control', 'clear', 'admin'];

interface RouteCase {
  method: string;
  path: string;
  /** What the route needs: `open`, any valid key, or the least scope. */
  needs: 'open' | 'key' | 'read' | 'print' | 'control' | 'clear' | 'admin';
  /** The status once access is granted (the request is built to change nothing). */
  granted: number;
  body?: () => RequestInit;
}

/** Every operation of the document, with a request that passes access and then fails harmlessly. */
const ROUTES: RouteCase[] = [
  { method: 'GET', path: '/', needs: 'open', granted: 200 },
  { method: 'GET', path: '/ping', needs: 'open', granted: 200 },
  { method: 'GET', path: '/metrics', needs: 'read', granted: 200 },
  { method: 'GET', path: '/machines', needs: 'read', granted: 200 },
  { method: 'GET', path: '/machines/sim', needs: 'read', granted: 200 },
  { method: 'POST', path: '/machines/sim/pause', needs: 'control', granted: 409 },
  { method: 'POST', path: '/machines/sim/resume', needs: 'control', granted: 409 },
  { method: 'POST', path: '/machines/sim/stop', needs: 'control', granted: 409 },
  { method: 'POST', path: '/print', needs: 'print', granted: 400 },
  { method: 'GET', path: '/jobs', needs: 'read', granted: 200 },
  { method: 'GET', path: '/stats', needs: 'read', granted: 200 },
  { method: 'GET', path: '/jobs/00000000-0000-4000-8000-000000000000', needs: 'read', granted: 404 },
  { method: 'POST', path: '/jobs/00000000-0000-4000-8000-000000000000/cancel', needs: 'print', granted: 404 },
  { method: 'POST', path: '/machines/sim/clear', needs: 'clear', granted: 200 },
  { method: 'GET', path: '/presets', needs: 'read', granted: 200 },
  {
    method: 'POST',
    path: '/machines/preheat',
    needs: 'control',
    granted: 400,
    body: () => ({
      headers: { 'content-type': 'application/json' },
      body: '{"preset":"nope","machines":["sim"]}',
    }),
  },
  {
    method: 'POST',
    path: '/machines/sim/temperature',
    needs: 'control',
    granted: 400,
    body: () => ({ headers: { 'content-type': 'application/json' }, body: '{"tool":9999}' }),
  },
  // No [spoolman] in this configuration: a well-formed assignment is refused once access is granted.
  {
    method: 'PUT',
    path: '/machines/sim/spool',
    needs: 'control',
    granted: 409,
    body: () => ({ headers: { 'content-type': 'application/json' }, body: '{"spool_id":1}' }),
  },
  { method: 'POST', path: '/queue', needs: 'print', granted: 400 },
  { method: 'GET', path: '/queue', needs: 'read', granted: 200 },
  // A stream: the bad filter answers 400 once the key has passed, instead of streaming forever.
  { method: 'GET', path: '/events?types=nope', needs: 'read', granted: 400 },
  { method: 'GET', path: '/events/history?limit=1', needs: 'read', granted: 200 },
  // The simulated machine has no camera and the job does not exist: read is enough to learn so.
  { method: 'GET', path: '/machines/sim/snapshot', needs: 'read', granted: 404 },
  { method: 'GET', path: '/machines/sim/stream', needs: 'read', granted: 404 },
  { method: 'GET', path: '/jobs/00000000-0000-4000-8000-000000000000/photo', needs: 'read', granted: 404 },
  {
    method: 'PATCH',
    path: '/jobs/00000000-0000-4000-8000-000000000000',
    needs: 'print',
    granted: 404,
    body: () => ({ headers: { 'content-type': 'application/json' }, body: '{"priority":1}' }),
  },
  {
    method: 'POST',
    path: '/jobs/00000000-0000-4000-8000-000000000000/requeue',
    needs: 'print',
    granted: 404,
  },
  { method: 'GET', path: '/keys', needs: 'admin', granted: 200 },
  {
    method: 'POST',
    path: '/keys',
    needs: 'admin',
    granted: 400,
    body: () => ({ headers: { 'content-type': 'application/json' }, body: '{"name":"x","scopes":["nope"]}' }),
  },
  { method: 'DELETE', path: '/keys/nobody', needs: 'admin', granted: 404 },
  { method: 'GET', path: '/keys/requests', needs: 'admin', granted: 200 },
  {
    method: 'POST',
    path: '/keys/requests/nope/approve',
    needs: 'admin',
    granted: 404,
    body: json('{}'),
  },
  { method: 'POST', path: '/keys/requests/nope/deny', needs: 'admin', granted: 404 },
  { method: 'GET', path: '/octoprint/sim/plugin/appkeys/probe', needs: 'open', granted: 204 },
  {
    method: 'POST',
    path: '/octoprint/sim/api/job',
    needs: 'control',
    granted: 409,
    body: json('{"command":"pause","action":"toggle"}'),
  },
  { method: 'GET', path: '/octoprint/sim/webcam/?action=snapshot', needs: 'read', granted: 404 },
  { method: 'DELETE', path: '/machines/sim/camera-token', needs: 'admin', granted: 204 },
  { method: 'GET', path: '/octoprint/sim/api/connection', needs: 'read', granted: 200 },
  {
    method: 'POST',
    path: '/octoprint/sim/api/connection',
    needs: 'control',
    granted: 204,
    body: json('{"command":"connect"}'),
  },
  { method: 'GET', path: '/octoprint/sim/api/system/commands', needs: 'read', granted: 200 },
  { method: 'POST', path: '/octoprint/sim/api/system/commands/core/restart', needs: 'key', granted: 404 },
  { method: 'GET', path: '/octoprint/sim/api/files', needs: 'read', granted: 200 },
  {
    method: 'POST',
    path: '/octoprint/sim/api/printer/tool',
    needs: 'control',
    granted: 204,
    body: json('{"command":"offset","offsets":{"tool0":0}}'),
  },
  {
    method: 'POST',
    path: '/octoprint/sim/api/printer/bed',
    needs: 'control',
    granted: 204,
    body: json('{"command":"offset","offset":0}'),
  },
  { method: 'GET', path: '/octoprint/sim/sockjs/websocket', needs: 'open', granted: 400 },
  {
    method: 'POST',
    path: '/octoprint/sim/plugin/appkeys/request',
    needs: 'open',
    granted: 400,
    body: json('{"app": 42}'),
  },
  { method: 'GET', path: '/octoprint/sim/plugin/appkeys/request/nope', needs: 'open', granted: 404 },
  { method: 'GET', path: '/notifications/targets', needs: 'admin', granted: 200 },
  {
    method: 'POST',
    path: '/notifications/targets',
    needs: 'admin',
    granted: 400,
    body: () => ({ headers: { 'content-type': 'application/json' }, body: '{"name":"x","kind":"nope"}' }),
  },
  { method: 'GET', path: '/notifications/targets/nope', needs: 'admin', granted: 404 },
  {
    method: 'PATCH',
    path: '/notifications/targets/nope',
    needs: 'admin',
    granted: 404,
    body: () => ({ headers: { 'content-type': 'application/json' }, body: '{"enabled":false}' }),
  },
  { method: 'DELETE', path: '/notifications/targets/nope', needs: 'admin', granted: 404 },
  { method: 'POST', path: '/notifications/targets/nope/test', needs: 'admin', granted: 404 },
  { method: 'GET', path: '/notifications/deliveries', needs: 'admin', granted: 200 },
  { method: 'GET', path: '/files', needs: 'read', granted: 200 },
  { method: 'POST', path: '/files/nothing.gcode/print', needs: 'print', granted: 404 },
  { method: 'DELETE', path: '/files/nothing.gcode', needs: 'print', granted: 404 },
  { method: 'GET', path: '/octoprint/sim/api/version', needs: 'key', granted: 200 },
  { method: 'GET', path: '/octoprint/sim/api/server', needs: 'key', granted: 200 },
  { method: 'GET', path: '/octoprint/sim/api/settings', needs: 'key', granted: 200 },
  { method: 'GET', path: '/octoprint/sim/api/currentuser', needs: 'key', granted: 200 },
  {
    method: 'POST',
    path: '/octoprint/sim/api/login',
    needs: 'key',
    granted: 200,
    body: json('{"passive":true}'),
  },
  { method: 'GET', path: '/octoprint/sim/api/printerprofiles', needs: 'read', granted: 200 },
  { method: 'GET', path: '/octoprint/sim/api/printer', needs: 'read', granted: 200 },
  { method: 'GET', path: '/octoprint/sim/api/job', needs: 'read', granted: 200 },
  { method: 'POST', path: '/octoprint/sim/api/files/local', needs: 'print', granted: 400 },
  {
    method: 'POST',
    path: '/octoprint/sim/api/files/local/nothing.gcode',
    needs: 'print',
    granted: 404,
    body: json('{"command":"select","print":true}'),
  },
];

function json(body: string): () => RequestInit {
  return () => ({ headers: { 'content-type': 'application/json' }, body });
}

const RANK = {
  read: ['read', 'admin'],
  print: ['print', 'admin'],
  control: ['control', 'admin'],
  // A bed sensor's key: the clear confirmation and nothing else; `control` includes it.
  clear: ['clear', 'control', 'admin'],
  admin: ['admin'],
};

function isOctoPrint(route: RouteCase): boolean {
  return route.path.startsWith('/octoprint/');
}

function expectedStatus(route: RouteCase, credential: Credential): number {
  if (route.needs === 'open') return route.granted;
  // OctoPrint answers 403 for a missing or unknown key, and so do its bases here.
  if (credential === 'none' || credential === 'wrong') return isOctoPrint(route) ? 403 : 401;
  if (route.needs === 'key') return route.granted;
  // Own-job routes (cancel, requeue, change, removing a stored file) let `print` and `control` keys through
  // to the service.
  const ownJob =
    route.path.endsWith('/cancel') ||
    route.path.endsWith('/requeue') ||
    (route.method === 'PATCH' && route.path.startsWith('/jobs/')) ||
    (route.method === 'DELETE' && route.path.startsWith('/files/'));
  if (ownJob && (credential === 'print' || credential === 'control')) return route.granted;
  return RANK[route.needs].includes(credential) ? route.granted : 403;
}

describe('API keys with scopes', () => {
  let api: Awaited<ReturnType<typeof startWithLog>>;
  let client: ContractClient;
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    api = await startWithLog(CONFIG);
    for (const scope of ['read', 'print', 'control', 'clear', 'admin'])
      keys[scope] = await createKey(api.dataDir, `k-${scope}`, scope);
    keys.wrong = `mapi_${'0'.repeat(16)}_${'A'.repeat(43)}`;
    client = await ContractClient.create(api.service.url);
  });
  afterAll(() => api.close());

  const headersFor = (credential: Credential): Record<string, string> =>
    credential === 'none' ? {} : { 'x-api-key': keys[credential] as string };

  it('documents every operation in the access matrix of this test', () => {
    const documented = Object.entries(
      client.document.paths as Record<string, Record<string, unknown>>,
    ).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const tested = new Set(
      ROUTES.map(
        (r) =>
          `${r.method} ${r.path
            .replace('/machines/sim', '/machines/{id}')
            .replace(/\/jobs\/[0-9a-f-]{36}/, '/jobs/{id}')
            .replace('/keys/nobody', '/keys/{name}')
            .replace('/keys/requests/nope', '/keys/requests/{id}')
            .replace('appkeys/request/nope', 'appkeys/request/{token}')
            .replace('commands/core/restart', 'commands/{source}/{action}')
            .replace('/notifications/targets/nope', '/notifications/targets/{id}')
            .replace('/octoprint/sim/', '/octoprint/{target}/')
            .replace('files/local/nothing.gcode', 'files/local/{*}')
            .replace('/files/nothing.gcode', '/files/{name}')
            .replace(/\?.*$/, '')}`,
      ),
    );
    for (const operation of documented) expect(tested, operation).toContain(operation);
  });

  for (const route of ROUTES) {
    it(`${route.method} ${route.path}: ${CREDENTIALS.map((c) => `${c}→${expectedStatus(route, c)}`).join(' ')}`, async () => {
      for (const credential of CREDENTIALS) {
        const init = route.body?.() ?? {};
        const res = await client.request(route.method, route.path, {
          ...init,
          headers: { ...(init.headers as Record<string, string>), ...headersFor(credential) },
        });
        expect(res.status, `${route.method} ${route.path} with ${credential}`).toBe(
          expectedStatus(route, credential),
        );
        if (isOctoPrint(route) && route.needs !== 'open' && res.status >= 400) {
          const message = (res.body as { error: string }).error;
          if (credential === 'none') {
            expect(message).toBe('an API key is required: send it as X-Api-Key or Authorization: Bearer');
          } else if (credential === 'wrong') {
            expect(message).toBe('the API key is not valid (unknown or revoked)');
          } else if (res.status === 403) {
            expect(message).toContain(`lacks the "${route.needs}" scope`);
          }
          expect(res.headers.get('www-authenticate')).toBeNull();
        } else if (res.status === 401) {
          expect(res.body).toEqual({
            request_id: res.headers.get('x-request-id'),
            error_code: 'Unauthorized',
            message:
              credential === 'none'
                ? 'an API key is required: send it as X-Api-Key or Authorization: Bearer'
                : 'the API key is not valid (unknown or revoked)',
          });
          expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="machine-api"/);
        }
        if (res.status === 403 && !isOctoPrint(route)) {
          expect(res.body).toMatchObject({
            request_id: res.headers.get('x-request-id'),
            error_code: 'MissingScope',
          });
          expect((res.body as { message: string }).message).toContain(`lacks the "${route.needs}" scope`);
        }
      }
    });
  }

  it('documents the security schemes and the key each operation needs in the OpenAPI document', () => {
    const document = client.document as {
      components: { securitySchemes: Record<string, unknown> };
      paths: Record<string, Record<string, { security?: unknown; 'x-required-scope'?: string }>>;
    };
    expect(document.components.securitySchemes).toEqual({
      api_key: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-Api-Key' }),
      bearer: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
    const keyed = [{ api_key: [] }, { bearer: [] }];
    expect(document.paths['/']?.get?.security).toEqual([]);
    expect(document.paths['/ping']?.get?.security).toEqual([]);
    expect(document.paths['/machines']?.get).toMatchObject({ security: keyed, 'x-required-scope': 'read' });
    expect(document.paths['/machines/{id}/stop']?.post).toMatchObject({
      security: keyed,
      'x-required-scope': 'control',
    });
    expect(document.paths['/print']?.post).toMatchObject({ security: keyed, 'x-required-scope': 'print' });
    expect(document.paths['/keys']?.post).toMatchObject({ security: keyed, 'x-required-scope': 'admin' });
    expect(document.paths['/jobs/{id}/cancel']?.post?.['x-required-scope']).toBe(
      'print (own jobs) or control',
    );
    expect(document.paths['/octoprint/{target}/api/version']?.get?.['x-required-scope']).toBe('any');
  });

  it('accepts the key as Authorization: Bearer too', async () => {
    const res = await fetch(`${api.service.url}/machines`, {
      headers: { authorization: `Bearer ${keys.read}` },
    });
    expect(res.status).toBe(200);
    const wrong = await fetch(`${api.service.url}/machines`, { headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
  });

  it('names the missing scope in the 403', async () => {
    const res = await client.request('POST', '/machines/sim/stop', {
      headers: { 'x-api-key': keys.print as string },
    });
    expect(res.body).toEqual({
      request_id: res.headers.get('x-request-id'),
      error_code: 'MissingScope',
      message: 'the API key "k-print" lacks the "control" scope needed for POST /machines/{id}/stop',
    });
  });

  it('creates, lists and revokes keys over HTTP with an admin key; the key is shown once and stored hashed', async () => {
    const admin = { 'x-api-key': keys.admin as string, 'content-type': 'application/json' };
    const created = await client.request<{ name: string; scopes: string[]; key: string; created_at: string }>(
      'POST',
      '/keys',
      { headers: admin, body: JSON.stringify({ name: 'slicer', scopes: ['print', 'read'] }) },
    );
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    expect(created.body).toMatchObject({ name: 'slicer', scopes: ['read', 'print'] });
    const key = created.body.key;
    expect(key).toMatch(/^mapi_/);
    const again = await client.request('POST', '/keys', {
      headers: admin,
      body: JSON.stringify({ name: 'slicer', scopes: ['read'] }),
    });
    expect(again.status).toBe(409);
    const list = await client.request<{ name: string }[]>('GET', '/keys', { headers: admin });
    expect(list.body.map((k) => k.name)).toEqual([
      'k-admin',
      'k-clear',
      'k-control',
      'k-print',
      'k-read',
      'slicer',
    ]);
    expect(list.text).not.toContain('mapi_');
    const { out } = await cli(api.dataDir, ['list']);
    expect(out).toContain('slicer\tread,print\t');
    expect(out).not.toContain('mapi_');
    // Only a hash is stored: the database never contains the key or its secret.
    const database = await storedBytes(api);
    expect(database).toContain('slicer');
    expect(database).not.toContain(key.split('_')[2]);
    expect((await fetch(`${api.service.url}/jobs`, { headers: { 'x-api-key': key } })).status).toBe(200);
    const revoked = await client.request('DELETE', '/keys/slicer', {
      headers: { 'x-api-key': keys.admin as string },
    });
    expect(revoked.status).toBe(204);
    expect((await fetch(`${api.service.url}/jobs`, { headers: { 'x-api-key': key } })).status).toBe(401);
  });

  it('revokes a key from the CLI while the server runs: the next request with it is refused', async () => {
    const key = await createKey(api.dataDir, 'temporary', 'read');
    expect((await fetch(`${api.service.url}/machines`, { headers: { 'x-api-key': key } })).status).toBe(200);
    const { code, out } = await cli(api.dataDir, ['revoke', 'temporary']);
    expect(code).toBe(0);
    expect(out).toBe('revoked "temporary"\n');
    expect((await fetch(`${api.service.url}/machines`, { headers: { 'x-api-key': key } })).status).toBe(401);
    await expect(cli(api.dataDir, ['revoke', 'temporary'])).rejects.toThrow('no key named "temporary"');
    await expect(cli(api.dataDir, ['create'], { name: 'bad', scope: 'read,fly' })).rejects.toThrow(
      'unknown scope "fly"; expected some of read, print, control, clear, admin',
    );
  });

  it('never writes a key into the log', async () => {
    for (const key of Object.values(keys)) {
      await fetch(`${api.service.url}/machines?apikey=${key}`, { headers: { 'x-api-key': key } });
      await fetch(`${api.service.url}/octoprint/sim/api/version?x=1&token=${key}`);
      await fetch(`${api.service.url}/jobs`, { headers: { authorization: `Bearer ${key}` } });
      await fetch(`${api.service.url}/keys`, { method: 'DELETE', headers: { 'x-api-key': key } });
    }
    const log = api.log();
    expect(log).toContain('"msg":"request"');
    for (const key of Object.values(keys)) {
      expect(log).not.toContain(key);
      expect(log).not.toContain(key.slice(-20));
    }
  });
});

describe('drive-by protection', () => {
  let api: Awaited<ReturnType<typeof startWithLog>>;
  let control: string;
  beforeAll(async () => {
    api = await startWithLog(`
[server]
auth = "off"
allowed_origins = ["https://app.example.com"]

[machines.sim]
type = "Noop"
print_seconds = 60
`);
    control = await createKey(api.dataDir, 'ctl', 'control');
  });
  afterAll(() => api.close());

  const printForm = () => {
    const form = new FormData();
    form.append('params', JSON.stringify({ machine_id: 'sim', job_name: 'drive-by' }));
    form.append('file', new Blob(['G28\n']), 'x.gcode');
    return form;
  };

  it('refuses a state-changing request from a foreign Origin with 403, whatever auth says, and changes nothing', async () => {
    for (const origin of ['http://evil.example', 'null', 'http://rebind.example:1234']) {
      const res = await fetch(`${api.service.url}/print`, {
        method: 'POST',
        body: printForm(),
        headers: { origin },
      });
      expect(res.status).toBe(403);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toEqual({
        request_id: res.headers.get('x-request-id'),
        error_code: 'ForeignOrigin',
        message: `requests that change state are refused from the web origin ${JSON.stringify(origin)}; list it in [server] allowed_origins to allow a web front end there`,
      });
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      const withKey = await fetch(`${api.service.url}/machines/sim/stop`, {
        method: 'POST',
        headers: { origin, 'x-api-key': control },
      });
      expect(withKey.status).toBe(403);
    }
    const jobs = (await (await fetch(`${api.service.url}/jobs`)).json()) as unknown[];
    expect(jobs).toEqual([]);
  });

  it('lets the listed origin write, with CORS for it, and non-browser clients without Origin', async () => {
    const preflight = await fetch(`${api.service.url}/print`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(preflight.headers.get('access-control-allow-methods')).toBe('GET, HEAD, POST, PUT, PATCH, DELETE');
    const foreignPreflight = await fetch(`${api.service.url}/machines/sim/stop`, {
      method: 'OPTIONS',
      headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(foreignPreflight.headers.get('access-control-allow-origin')).toBeNull();
    const res = await fetch(`${api.service.url}/print`, {
      method: 'POST',
      body: printForm(),
      headers: { origin: 'https://app.example.com' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    const stop = await fetch(`${api.service.url}/machines/sim/stop`, { method: 'POST' });
    expect(stop.status).toBe(200);
  });

  it("treats the service's own origin (an IP literal host) as its own, but not a rebinding host name", async () => {
    const own = new URL(api.service.url).origin;
    const res = await fetch(`${api.service.url}/machines/sim/pause`, {
      method: 'POST',
      headers: { origin: own },
    });
    expect(res.status).toBe(409);
    const rebound = await fetch(`${api.service.url}/machines/sim/pause`, {
      method: 'POST',
      headers: { origin: 'http://rebind.example:8080', host: 'rebind.example:8080' },
    });
    expect(rebound.status).toBe(403);
  });

  it('warns when auth is off on a non-loopback bind, and defaults to keys there', async () => {
    const open = await startWithLog('[server]\nauth = "off"\n', '0.0.0.0');
    try {
      expect(open.log()).toContain('[server] auth = \\"off\\" on 0.0.0.0: anyone who can reach this port');
    } finally {
      await open.close();
    }
    const keyed = await startWithLog('[machines.sim]\ntype = "Noop"\n', '0.0.0.0');
    try {
      const port = new URL(keyed.service.url).port;
      expect((await fetch(`http://127.0.0.1:${port}/machines`)).status).toBe(401);
      expect((await fetch(`http://127.0.0.1:${port}/ping`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
    } finally {
      await keyed.close();
    }
    const local = await startWithLog('[machines.sim]\ntype = "Noop"\n');
    try {
      expect((await fetch(`${local.service.url}/machines`)).status).toBe(200);
    } finally {
      await local.close();
    }
  });
});

describe('queued jobs belong to the key that queued them', () => {
  it('a print key changes, requeues and cancels only its own queued jobs; control acts on any', async () => {
    // A machine that never becomes ready: the job keeps waiting in the queue.
    const api = await startWithLog(
      '[server]\nauth = "keys"\n[machines.busy]\ntype = "Noop"\nstate.state = "running"\n',
    );
    try {
      const mine = await createKey(api.dataDir, 'mine', 'read,print');
      const theirs = await createKey(api.dataDir, 'theirs', 'read,print');
      const control = await createKey(api.dataDir, 'boss', 'control');
      const form = new FormData();
      form.append('params', JSON.stringify({ job_name: 'owned' }));
      form.append('file', new Blob(['G28\n']), 'part.gcode');
      const queued = await fetch(`${api.service.url}/queue`, {
        method: 'POST',
        headers: { 'x-api-key': mine },
        body: form,
      });
      expect(queued.status).toBe(201);
      const job = (await queued.json()) as { id: string; owner: string; status: string };
      expect(job).toMatchObject({ owner: 'mine', status: 'queued' });
      const send = (method: string, path: string, key: string, body?: string) =>
        fetch(`${api.service.url}${path}`, {
          method,
          headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
          body,
        });

      for (const [method, path, body] of [
        ['PATCH', `/jobs/${job.id}`, '{"priority":3}'],
        ['POST', `/jobs/${job.id}/cancel`, undefined],
      ] as const) {
        const refused = await send(method, path, theirs, body);
        expect(refused.status, `${method} ${path}`).toBe(403);
        expect(await refused.json()).toMatchObject({
          error_code: 'MissingScope',
          message: expect.stringContaining(`job ${job.id} was submitted by the key "mine"`),
        });
      }
      const changed = await send('PATCH', `/jobs/${job.id}`, mine, '{"priority":3}');
      expect(changed.status).toBe(200);
      expect(await changed.json()).toMatchObject({ priority: 3, position: 1 });
      const cancelled = await send('POST', `/jobs/${job.id}/cancel`, mine);
      expect(cancelled.status).toBe(200);
      expect((await send('POST', `/jobs/${job.id}/requeue`, theirs)).status).toBe(403);
      const requeued = await send('POST', `/jobs/${job.id}/requeue`, control);
      expect(requeued.status).toBe(200);
      expect(await requeued.json()).toMatchObject({ status: 'queued', owner: 'mine' });
    } finally {
      await api.close();
    }
  });
});

export type { RunningService };

/** Everything the service's database holds, as text: the SQLite files, or every PostgreSQL row of the keys. */
async function storedBytes(api: { dataDir: string; databaseUrl: string | undefined }): Promise<string> {
  if (api.databaseUrl) {
    const client = new pg.Client({ connectionString: api.databaseUrl });
    await client.connect();
    try {
      return JSON.stringify((await client.query('select * from api_keys')).rows);
    } finally {
      await client.end();
    }
  }
  const { readFileSync } = await import('node:fs');
  return (
    readFileSync(join(api.dataDir, 'machine-api.sqlite')).toString('latin1') +
    readFileSync(join(api.dataDir, 'machine-api.sqlite-wal')).toString('latin1')
  );
}
