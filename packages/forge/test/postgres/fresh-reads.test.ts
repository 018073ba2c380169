// Read-after-write on two forge processes sharing one PostgreSQL database (issue 35): writes go to the
// first, reads to either, and every read sent after a write's answer arrived reflects it, for every
// kind of credential and of change (test/freshness-matrix.ts).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { defineFreshnessMatrix, type FreshnessTarget } from '../freshness-matrix.js';
import { createPostgresDatabase, type TestDatabase } from '../test-database.js';
import { type ForgeProcess, spawnForge } from './forge-process.js';

let dataDir: string;
let database: TestDatabase;
let forges: ForgeProcess[] = [];
let target: FreshnessTarget;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'forge-fresh-reads-'));
  database = await createPostgresDatabase();
  forges = await Promise.all([
    spawnForge({ dataDir, databaseUrl: database.url }),
    spawnForge({ dataDir, databaseUrl: database.url }),
  ]);
  const password = /password: (\S+)/.exec(forges.flatMap((forge) => forge.printed).join('\n'))?.[1];
  if (!password) throw new Error('neither forge printed the administrator password');
  const created = await fetch(`${forges[0]!.url}/api/v1/users/forge-admin/tokens`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`forge-admin:${password}`).toString('base64')}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ name: 'fresh-reads', scopes: ['all'] }),
  });
  if (created.status !== 201) throw new Error(`admin token: ${created.status} ${await created.text()}`);
  const token = ((await created.json()) as { sha1: string }).sha1;
  target = {
    urls: forges.map((forge) => forge.url),
    admin: { username: 'forge-admin', password, token },
    dir: dataDir,
  };
}, 120_000);

afterAll(async () => {
  await Promise.all(forges.map((forge) => forge.stop()));
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

defineFreshnessMatrix('two processes on PostgreSQL', () => target);
