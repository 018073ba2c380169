// forge runs its hot statements as named prepared statements on PostgreSQL (src/store/prepared-pool.ts):
// a column added by a newer forge's migration while this one runs must not turn its reads into errors.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresDatabase, type TestDatabase } from '../test-database.js';
import { type ForgeProcess, spawnForge } from './forge-process.js';

let dataDir: string;
let database: TestDatabase;
let forge: ForgeProcess;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'forge-prepared-'));
  database = await createPostgresDatabase();
  forge = await spawnForge({ dataDir, databaseUrl: database.url });
}, 120_000);

afterAll(async () => {
  await forge?.stop();
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

async function getAdmin() {
  const response = await fetch(`${forge.url}/api/v1/users/forge-admin`);
  return { status: response.status, body: await response.json() };
}

describe('prepared statements on PostgreSQL', () => {
  it('keep answering after another process adds a column to a table they select * from', async () => {
    // Sequential requests reuse the pool's most recently released connection, which prepares the
    // user lookup on the first of them and runs it prepared on the others.
    const before = await getAdmin();
    expect(before.status).toBe(200);
    expect(await getAdmin()).toEqual(before);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query(`ALTER TABLE "user" ADD COLUMN added_by_a_newer_forge text NOT NULL DEFAULT ''`);
    } finally {
      await client.end();
    }
    expect(await getAdmin()).toEqual(before);
    expect(await getAdmin()).toEqual(before);
  });
});
