// Two forge processes on one PostgreSQL database share one outbox: every delivery is sent exactly
// once, whichever process raised it and whichever claims it.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HookReceiver, startHookReceiver } from '../hook-receiver.js';
import { createPostgresDatabase, type TestDatabase } from '../test-database.js';
import { type ForgeProcess, spawnForge } from './forge-process.js';

let dataDir: string;
let database: TestDatabase;
let forges: ForgeProcess[] = [];
let receiver: HookReceiver;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'forge-hook-scale-'));
  database = await createPostgresDatabase();
  receiver = await startHookReceiver('scale');
  const configFile = join(dataDir, 'forge.toml');
  await writeFile(configFile, '[webhook]\nallowed_host_list = "loopback"\npoll_interval = 0.1\n');
  forges = await Promise.all([
    spawnForge({ dataDir, databaseUrl: database.url, configFile }),
    spawnForge({ dataDir, databaseUrl: database.url, configFile }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all(forges.map((forge) => forge.stop()));
  await receiver?.close();
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('two forge processes, one outbox', () => {
  it('send each delivery once', async () => {
    const password = forges
      .flatMap((forge) => forge.printed)
      .map((line) => /password: (\S+)/.exec(line)?.[1])
      .find(Boolean);
    const made = await fetch(`${forges[0]!.url}/api/v1/users/forge-admin/tokens`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`forge-admin:${password}`).toString('base64')}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ name: 'scale', scopes: ['all'] }),
    });
    const token = ((await made.json()) as { sha1: string }).sha1;
    const call = (index: number, method: string, path: string, body?: unknown) =>
      fetch(`${forges[index % 2]!.url}/api/v1${path}`, {
        method,
        headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    expect((await call(0, 'POST', '/user/repos', { name: 'shared', auto_init: true })).status).toBe(201);
    const hook = await call(1, 'POST', '/repos/forge-admin/shared/hooks', {
      type: 'gitea',
      config: { url: receiver.url, content_type: 'json', secret: 'scale' },
      events: ['release'],
      active: true,
    });
    expect(hook.status).toBe(201);
    const count = 30;
    const created = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        call(i, 'POST', '/repos/forge-admin/shared/releases', { tag_name: `s${i}` }).then((r) => r.status),
      ),
    );
    expect(created.every((status) => status === 201)).toBe(true);
    await receiver.waitFor((received) => received.length >= count);
    // Every delivery finished after exactly one claim (a second send needs a second claim, which counts).
    const hookId = ((await hook.json()) as { id: number }).id;
    const history = async () => {
      const res = await call(0, 'GET', `/repos/forge-admin/shared/hooks/${hookId}/deliveries?limit=50`);
      return (await res.json()) as Array<{ state: string; attempts: number }>;
    };
    let deliveries = await history();
    while (deliveries.length < count || deliveries.some((d) => d.state !== 'delivered')) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      deliveries = await history();
    }
    expect(deliveries.map((d) => d.attempts)).toEqual(Array(count).fill(1));
    const ids = receiver.received.map((r) => String(r.headers['x-gitea-delivery']));
    expect(ids).toHaveLength(count);
    expect(new Set(ids).size).toBe(count);
    expect(receiver.received.every((r) => r.signatureValid)).toBe(true);
  }, 60_000);
});
