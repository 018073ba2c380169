/**
 * The users and releases scenarios on each store: SQLite (one process), PostgreSQL (one process) and
 * PostgreSQL with two forge processes sharing one port through node:cluster. The PostgreSQL ones run
 * when FORGE_BENCH_DATABASE_URL names a server (a database is created and dropped per scenario).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import type { Scenario } from '../../../bench/scenario.js';
import { freePort, startService, waitForHttp } from '../../../bench/service-process.js';
import { openDatabase } from '../src/store/database.js';

const cli = new URL('../dist/cli.js', import.meta.url).pathname;
const clusterLauncher = new URL('./forge-cluster.mjs', import.meta.url).pathname;
const USERS = 100_000;

type Store = 'sqlite' | 'postgres' | 'postgres, 2 processes';

/** A login of varied letters, like real user names (`u` + 9 characters of a hash of `index`). */
function benchName(index: number): string {
  return `u${createHash('sha1').update(String(index)).digest('hex').slice(0, 9)}`;
}

/** Seeds 100 000 users with varied names in batches through Kysely. */
async function seedUsers(databaseUrl: string): Promise<void> {
  const forge = await openDatabase({ url: databaseUrl });
  try {
    const now = Math.floor(Date.now() / 1000);
    for (let start = 0; start < USERS; start += 1000) {
      const rows = Array.from({ length: 1000 }, (_, offset) => {
        const name = benchName(start + offset);
        return {
          lower_name: name,
          name,
          full_name: `Bench User ${start + offset}`,
          email: `${name}@example.com`,
          is_active: 1 as const,
          created_unix: now,
          updated_unix: now,
        };
      });
      await forge.db.insertInto('user').values(rows).execute();
    }
    // Planner statistics as a database that has been running a while has them (autovacuum, or
    // SQLite's optimize), instead of the guesses a freshly filled table gets.
    await sql`ANALYZE`.execute(forge.db);
  } finally {
    await forge.close();
  }
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

/** Starts `processes` forge processes on one port (node:cluster above one) and waits for them. */
async function startCluster(dir: string, databaseUrl: string, processes: number) {
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    [
      clusterLauncher,
      String(processes),
      cli,
      'serve',
      '--bind',
      `127.0.0.1:${port}`,
      '--data-dir',
      dir,
      '--database-url',
      databaseUrl,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, LOG_LEVEL: 'warn' } },
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitForHttp(`${baseUrl}/api/v1/version`, 60_000);
  return {
    baseUrl,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** Starts forge on `store` after `seed` filled its database; returns the base URL and teardown. */
async function startOn(store: Store, seed: (dir: string, databaseUrl: string) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), 'forge-bench-'));
  const server = process.env.FORGE_BENCH_DATABASE_URL;
  let databaseUrl = `sqlite:${join(dir, 'forge.db')}`;
  let dropDatabase = async () => {};
  if (store !== 'sqlite') {
    if (!server) throw new Error('FORGE_BENCH_DATABASE_URL is not set');
    const name = `forge_bench_${randomBytes(4).toString('hex')}`;
    await onServer(server, `CREATE DATABASE ${name}`);
    const url = new URL(server);
    url.pathname = `/${name}`;
    databaseUrl = url.href;
    dropDatabase = () => onServer(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
  await seed(dir, databaseUrl);
  // Planner statistics as a running database has them (autovacuum), not a fresh table's guesses.
  if (store !== 'sqlite') await onServer(databaseUrl, 'ANALYZE');
  const service =
    store === 'postgres, 2 processes'
      ? await startCluster(dir, databaseUrl, 2)
      : await startService(cli, ['--data-dir', dir, '--database-url', databaseUrl], '/api/v1/version');
  return {
    baseUrl: service.baseUrl,
    teardown: async () => {
      await service.stop();
      await dropDatabase();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Users-search and release-list scenarios for every store configured on this machine. */
export function scaleOutScenarios(
  seedReleases: (dir: string, databaseUrl: string) => Promise<void>,
): Scenario[] {
  const stores: Store[] = process.env.FORGE_BENCH_DATABASE_URL
    ? ['sqlite', 'postgres', 'postgres, 2 processes']
    : ['sqlite'];
  return stores.flatMap((store): Scenario[] => [
    {
      name: `forge GET /users/search?q=<5 letters of a login> (100 000 users) [${store}]`,
      async prepare() {
        const service = await startOn(store, (_dir, url) => seedUsers(url));
        return {
          baseUrl: service.baseUrl,
          request: { path: `/api/v1/users/search?q=${benchName(4242).slice(2, 7)}&limit=10` },
          notes: { users: USERS, store },
          teardown: service.teardown,
        };
      },
    },
    ...(store === 'sqlite'
      ? []
      : [
          {
            name: `forge GET /repos/{o}/{r}/releases?limit=50 (10 000 releases) [${store}]`,
            async prepare() {
              const service = await startOn(store, seedReleases);
              return {
                baseUrl: service.baseUrl,
                request: { path: '/api/v1/repos/bench/big/releases?limit=50' },
                notes: { releases: 10_000, pageSize: 50, store },
                teardown: service.teardown,
              };
            },
          },
        ]),
  ]);
}
