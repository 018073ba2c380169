// kill -9 in the middle of a burst of releases: every release the forge acknowledged is delivered to
// the hook once the forge is back (the delivery row committed with the release), under its own delivery
// id. Runs on SQLite and, in the forge-postgres project, on PostgreSQL.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HookReceiver, startHookReceiver } from './hook-receiver.js';
import { type ForgeProcess, spawnForge } from './postgres/forge-process.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

const SECRET = 'crash-secret';

describe('webhook deliveries survive kill -9', () => {
  let dataDir: string;
  let configFile: string;
  let database: TestDatabase;
  let forge: ForgeProcess | undefined;
  let receiver: HookReceiver;
  let token = '';

  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${forge!.url}/api/v1${path}`, {
      method,
      headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'forge-hook-crash-'));
    database = await createTestDatabase(dataDir);
    receiver = await startHookReceiver(SECRET);
    configFile = join(dataDir, 'forge.toml');
    await writeFile(
      configFile,
      '[webhook]\nallowed_host_list = "loopback"\nretry_base_delay = 0.2\npoll_interval = 0.2\ndeliver_timeout = 2\n',
    );
    forge = await spawnForge({ dataDir, databaseUrl: database.url, configFile });
    const password = /password: (\S+)/.exec(forge.printed.join('\n'))?.[1];
    const made = await fetch(`${forge.url}/api/v1/users/forge-admin/tokens`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`forge-admin:${password}`).toString('base64')}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ name: 'crash', scopes: ['all'] }),
    });
    token = ((await made.json()) as { sha1: string }).sha1;
    expect((await api('POST', '/user/repos', { name: 'burst', auto_init: true })).status).toBe(201);
    const hook = await api('POST', '/repos/forge-admin/burst/hooks', {
      type: 'gitea',
      config: { url: receiver.url, content_type: 'json', secret: SECRET },
      events: ['release'],
      active: true,
    });
    expect(hook.status).toBe(201);
  }, 60_000);

  afterAll(async () => {
    await forge?.stop();
    await receiver?.close();
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('loses no acknowledged delivery', async () => {
    const acknowledged = new Set<string>();
    // Writers create releases until their requests fail; the process is killed once a few succeeded.
    const writer = async (id: number) => {
      for (let n = 0; ; n += 1) {
        const tag = `w${id}-${n}`;
        const res = await api('POST', '/repos/forge-admin/burst/releases', { tag_name: tag }).catch(
          () => null,
        );
        if (!res) return;
        if (res.status === 201) acknowledged.add(tag);
      }
    };
    const writers = [0, 1, 2, 3].map(writer);
    while (acknowledged.size < 12) await new Promise((resolve) => setTimeout(resolve, 5));
    await forge!.kill();
    await Promise.all(writers);
    forge = await spawnForge({ dataDir, databaseUrl: database.url, configFile });

    const tagsReceived = () =>
      new Set(
        receiver.received.map((r) => (r.payload as { release: { tag_name: string } }).release.tag_name),
      );
    await receiver.waitFor(() => [...acknowledged].every((tag) => tagsReceived().has(tag)), 30_000);
    expect(receiver.received.every((r) => r.signatureValid)).toBe(true);
    // One delivery id per release: a delivery sent twice (killed mid-send) repeats its id.
    const idsByTag = new Map<string, Set<string>>();
    for (const r of receiver.received) {
      const tag = (r.payload as { release: { tag_name: string } }).release.tag_name;
      idsByTag.set(tag, (idsByTag.get(tag) ?? new Set()).add(String(r.headers['x-gitea-delivery'])));
    }
    for (const [tag, ids] of idsByTag) expect(ids.size, tag).toBe(1);
  }, 90_000);
});
