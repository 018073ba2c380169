// Several forge processes on one PostgreSQL database and one shared data directory (issue 11).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forgeMigrations } from '../../src/store/database.js';
import { createPostgresDatabase, type TestDatabase } from '../test-database.js';
import { type ForgeProcess, runForgeCli, spawnForge } from './forge-process.js';

let dataDir: string;
let database: TestDatabase;
let forges: ForgeProcess[] = [];

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'forge-scale-out-'));
  database = await createPostgresDatabase();
  // Both processes start at the same moment on an empty database.
  forges = await Promise.all([
    spawnForge({ dataDir, databaseUrl: database.url }),
    spawnForge({ dataDir, databaseUrl: database.url }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all(forges.map((forge) => forge.stop()));
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

async function query<T>(statement: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return (await client.query(statement)).rows as T[];
  } finally {
    await client.end();
  }
}

const basic = (username: string, password: string) =>
  `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;

async function call(forge: ForgeProcess, method: string, path: string, token: string, body?: unknown) {
  const response = await fetch(`${forge.url}/api/v1${path}`, {
    method,
    headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON fields and assert them exactly.
  const parsed: any = await response.json().catch(() => undefined);
  return { status: response.status, body: parsed };
}

describe('two forge processes on one database', () => {
  let token: string;

  it('start together and migrate once, with one first administrator', async () => {
    const migrations = await query<{ name: string }>('SELECT name FROM kysely_migration ORDER BY name');
    expect(migrations.map((row) => row.name)).toEqual(Object.keys(forgeMigrations('postgres')).sort());
    const admins = await query<{ name: string }>('SELECT name FROM "user" WHERE is_admin = 1');
    expect(admins.map((row) => row.name)).toEqual(['forge-admin']);
    const announced = forges.filter((forge) => forge.printed.some((line) => line.includes('with password:')));
    expect(announced).toHaveLength(1);
    const extensions = await query<{ extname: string }>(
      "SELECT extname FROM pg_extension WHERE extname = 'pg_trgm'",
    );
    expect(extensions).toHaveLength(1);
  });

  it('`forge admin user create` works against PostgreSQL, and both processes see the user', async () => {
    const env = { FORGE_DATABASE_URL: database.url };
    const args = ['admin', 'user', 'create', '--username', 'Operator', '--password', 'operator-pass-1'];
    const created = await runForgeCli(
      [
        ...args,
        '--email',
        'operator@example.com',
        '--admin',
        '--must-change-password=false',
        '--data-dir',
        dataDir,
      ],
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toBe("New user 'Operator' has been successfully created!\n");
    const again = await runForgeCli(
      [...args, '--email', 'other@example.com', '--must-change-password=false', '--data-dir', dataDir],
      env,
    );
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('user already exists [name: Operator]');

    for (const forge of forges) {
      // Case-insensitive login through either process.
      const response = await fetch(`${forge.url}/api/v1/user`, {
        headers: { authorization: basic('operator', 'operator-pass-1') },
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ login: 'Operator', is_admin: true });
    }
    const tokenResponse = await fetch(`${forges[0]!.url}/api/v1/users/operator/tokens`, {
      method: 'POST',
      headers: { authorization: basic('Operator', 'operator-pass-1'), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'scale-out', scopes: ['all'] }),
    });
    expect(tokenResponse.status).toBe(201);
    token = ((await tokenResponse.json()) as { sha1: string }).sha1;
  });

  it('30 parallel creates of one tag spread over both processes: exactly one 201', async () => {
    const repo = await call(forges[0]!, 'POST', '/user/repos', token, { name: 'shared', auto_init: true });
    expect(repo.status).toBe(201);
    const attempts = await Promise.all(
      Array.from({ length: 30 }, (_, index) =>
        call(forges[index % 2]!, 'POST', '/repos/Operator/shared/tags', token, { tag_name: 'v1.0.0' }),
      ),
    );
    const statuses = attempts.map((attempt) => attempt.status).sort();
    expect(statuses).toEqual([201, ...Array(29).fill(409)]);
    for (const forge of forges) {
      expect((await call(forge, 'GET', '/repos/Operator/shared/tags/v1.0.0', token)).status).toBe(200);
    }
  });

  it('30 parallel creates of one release spread over both processes: exactly one 201', async () => {
    const attempts = await Promise.all(
      Array.from({ length: 30 }, (_, index) =>
        call(forges[index % 2]!, 'POST', '/repos/Operator/shared/releases', token, {
          tag_name: 'v2.0.0',
          name: `attempt ${index}`,
        }),
      ),
    );
    const statuses = attempts.map((attempt) => attempt.status).sort();
    expect(statuses).toEqual([201, ...Array(29).fill(409)]);
    const releases = await call(forges[1]!, 'GET', '/repos/Operator/shared/releases', token);
    expect(
      releases.body.filter((release: { tag_name: string }) => release.tag_name === 'v2.0.0'),
    ).toHaveLength(1);
  });
});
