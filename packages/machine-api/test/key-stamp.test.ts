/**
 * The API keys' change stamp (access/key-stamp.ts), which any cache of keys must consult: every write to
 * the keys moves it, whichever process writes (here `machine-api keys`, the same code the API runs), on
 * SQLite and, in the machine-api-postgres project, on PostgreSQL.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyStamp } from '../src/access/key-stamp.js';
import { type JobDatabaseHandle, openJobDatabase } from '../src/jobs/database.js';
import { runKeysCommand } from '../src/keys-command.js';
import { testDatabaseUrl } from './test-database.js';

let dir: string;
let databaseUrl: string | undefined;
let reader: JobDatabaseHandle;

async function keys(args: string[], flags: { name?: string; scope?: string } = {}): Promise<void> {
  const code = await runKeysCommand(args, { dataDir: dir, databaseUrl, ...flags, out: () => undefined });
  expect(code).toBe(0);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'machine-api-key-stamp-'));
  databaseUrl = await testDatabaseUrl(dir);
  reader = await openJobDatabase({ dataDir: dir, url: databaseUrl });
});

afterAll(async () => {
  await reader?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the API keys change stamp', () => {
  it('moves with every create and revoke made by another process, and only then', async () => {
    const stamp = new KeyStamp(reader.db);
    const before = await stamp.read();
    expect(await stamp.read()).toBe(before);
    await keys(['create'], { name: 'slicer', scope: 'read' });
    const created = await stamp.read();
    expect(created).toBeGreaterThan(before);
    await keys(['list']);
    expect(await stamp.read()).toBe(created);
    await keys(['revoke', 'slicer']);
    expect(await stamp.read()).toBeGreaterThan(created);
  });
});
