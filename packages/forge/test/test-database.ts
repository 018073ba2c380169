// The database a forge under test runs on: a SQLite file in its data dir, or, in the `forge-postgres`
// test project (FORGE_TEST_STORE=postgres), a PostgreSQL database of its own on the server named by
// FORGE_TEST_DATABASE_URL, created for the instance and dropped when it closes.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';

export interface TestDatabase {
  /** What `forge serve --database-url` receives. */
  url: string;
  dialect: 'sqlite' | 'postgres';
  /** Removes the database (PostgreSQL; the SQLite file goes with the data dir). */
  drop(): Promise<void>;
}

/** True when this test run targets PostgreSQL. */
export function testingPostgres(): boolean {
  return process.env.FORGE_TEST_STORE === 'postgres';
}

/** The PostgreSQL server URL tests create their databases on; throws with the fix when unset. */
export function postgresServerUrl(): string {
  const url = process.env.FORGE_TEST_DATABASE_URL;
  if (!url) {
    throw new Error(
      'FORGE_TEST_DATABASE_URL is not set: export FORGE_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres',
    );
  }
  return url;
}

/** Creates the database for one forge instance under test. */
export async function createTestDatabase(dataDir: string): Promise<TestDatabase> {
  if (!testingPostgres()) {
    return { url: `sqlite:${join(dataDir, 'forge.db')}`, dialect: 'sqlite', drop: async () => {} };
  }
  return createPostgresDatabase();
}

/** Creates a fresh, uniquely named PostgreSQL database on the test server. */
export async function createPostgresDatabase(): Promise<TestDatabase> {
  const server = postgresServerUrl();
  const name = `forge_test_${process.pid}_${randomBytes(6).toString('hex')}`;
  // An ICU en-US default collation, as production databases commonly have: it sorts punctuation unlike
  // SQLite's byte order, so the suite proves the forge does not depend on the database's locale.
  await onServer(
    server,
    `CREATE DATABASE ${name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'`,
  );
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    dialect: 'postgres',
    // FORCE ends connections a crashed forge may have left behind.
    drop: () => onServer(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
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
