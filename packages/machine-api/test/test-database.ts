// The database a machine-api under test runs on: SQLite in its data dir, or, in the `machine-api-postgres`
// test project (MACHINE_API_TEST_STORE=postgres), a PostgreSQL database of its own on the server named by
// MACHINE_API_TEST_DATABASE_URL, created for the test's directory and dropped when the file's tests end.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll } from 'vitest';

/** True when this test run targets PostgreSQL. */
export function testingPostgres(): boolean {
  return process.env.MACHINE_API_TEST_STORE === 'postgres';
}

/** The PostgreSQL server URL tests create their databases on; throws with the fix when unset. */
export function postgresServerUrl(): string {
  const url = process.env.MACHINE_API_TEST_DATABASE_URL;
  if (!url) {
    throw new Error(
      'MACHINE_API_TEST_DATABASE_URL is not set: export MACHINE_API_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres',
    );
  }
  return url;
}

/** One database per test directory, so a service restarted on the same directory finds its data again. */
const byDirectory = new Map<string, string>();
const created: string[] = [];
// Registered when the module loads, i.e. while the importing test file is collected (each file has its
// own module instance), so the databases go when that file's tests end.
if (testingPostgres()) afterAll(dropCreatedDatabases);

/**
 * The `--database-url` for a service whose data lives under `dir`: undefined on SQLite (the service
 * opens the file in its data dir), else the PostgreSQL database made for `dir`.
 */
export async function testDatabaseUrl(dir: string): Promise<string | undefined> {
  if (!testingPostgres()) return undefined;
  const known = byDirectory.get(dir);
  if (known) return known;
  const url = await createPostgresDatabase();
  byDirectory.set(dir, url);
  return url;
}

/** Creates a fresh, uniquely named PostgreSQL database on the test server; dropped after the file's tests. */
export async function createPostgresDatabase(): Promise<string> {
  const server = postgresServerUrl();
  const name = `machine_api_test_${process.pid}_${randomBytes(6).toString('hex')}`;
  await onServer(server, `CREATE DATABASE ${name}`);
  created.push(name);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return url.href;
}

async function dropCreatedDatabases(): Promise<void> {
  const server = postgresServerUrl();
  // FORCE ends connections a killed instance may have left behind.
  for (const name of created.splice(0))
    await onServer(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  byDirectory.clear();
}

async function onServer(server: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: server });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
