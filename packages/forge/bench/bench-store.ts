/**
 * Where a bench forge keeps its data: SQLite in its data dir, or a throw-away PostgreSQL database on the
 * server FORGE_BENCH_DATABASE_URL names (created before seeding, dropped at teardown), served by one
 * forge process or by two sharing one port through node:cluster.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Scenario } from '../../../bench/scenario.js';
import { freePort, startService, waitForHttp } from '../../../bench/service-process.js';

// FORGE_BENCH_CLI names another build's dist/cli.js, to compare two builds on the same machine.
const cli = process.env.FORGE_BENCH_CLI ?? new URL('../dist/cli.js', import.meta.url).pathname;
const clusterLauncher = new URL('./forge-cluster.mjs', import.meta.url).pathname;

export type BenchStore = 'sqlite' | 'postgres' | 'postgres, 2 processes';

/** The stores this machine can bench: PostgreSQL ones only when FORGE_BENCH_DATABASE_URL is set. */
export function benchStores(): BenchStore[] {
  return process.env.FORGE_BENCH_DATABASE_URL ? ['sqlite', 'postgres', 'postgres, 2 processes'] : ['sqlite'];
}

/**
 * The scenario `define` makes for SQLite, then its twins on PostgreSQL (one process, two processes) when
 * FORGE_BENCH_DATABASE_URL is set: same seed, same request, named `<name> [<store>]` so a --filter on the
 * name runs all of them. One PostgreSQL process is compared with SQLite, two processes with one.
 */
export function onEveryStore(
  name: string,
  define: (store: BenchStore) => Omit<Scenario, 'name'>,
): Scenario[] {
  return benchStores().map((store) =>
    store === 'sqlite'
      ? { name, ...define(store) }
      : {
          name: `${name} [${store}]`,
          twin: store === 'postgres' ? name : `${name} [postgres]`,
          ...define(store),
        },
  );
}

/** Runs one statement on `databaseUrl` over a connection of its own. */
export async function onServer(databaseUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/**
 * pg_stat_database's committed transactions of the database at `databaseUrl`, after flushing this
 * session's and waiting out the other sessions' statistics delay (they report at most once a second).
 * The count includes the two transactions of this check.
 */
async function committedTransactions(databaseUrl: string): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(
      'SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()',
    );
    return Number(rows[0].xact_commit);
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

export interface BenchForge {
  baseUrl: string;
  /** PostgreSQL: transactions committed in the database so far (each statement outside BEGIN is one). */
  countStatements?(): Promise<number>;
  dir: string;
  /** The forge.db of the SQLite store (what the direct-SQL baseline reads). */
  sqliteFile: string;
  stop(): Promise<void>;
}

/**
 * Starts forge on `store` after `seed` filled its database (given the data dir and the database URL).
 * PostgreSQL gets `VACUUM ANALYZE` after seeding, as autovacuum leaves a running database: planner
 * statistics instead of a fresh table's guesses, and a visibility map so covering indexes serve
 * index-only scans (without it the heatmap visits 14 000 heap pages per request, ~4x slower).
 */
export async function startForgeOn(
  store: BenchStore,
  seed?: (dir: string, databaseUrl: string) => Promise<void>,
  /** Writes a config file into the data dir and returns its path (single-process stores only). */
  configFile?: (dir: string) => string,
): Promise<BenchForge> {
  const dir = mkdtempSync(join(tmpdir(), 'forge-bench-'));
  const sqliteFile = join(dir, 'forge.db');
  const server = process.env.FORGE_BENCH_DATABASE_URL;
  let databaseUrl = `sqlite:${sqliteFile}`;
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
  try {
    await seed?.(dir, databaseUrl);
    if (store !== 'sqlite') await onServer(databaseUrl, 'VACUUM ANALYZE');
    const service =
      store === 'postgres, 2 processes'
        ? await startCluster(dir, databaseUrl, 2)
        : await startService(
            cli,
            [
              '--data-dir',
              dir,
              ...(store === 'sqlite' ? [] : ['--database-url', databaseUrl]),
              ...(configFile ? ['--config', configFile(dir)] : []),
            ],
            '/api/v1/version',
          );
    return {
      baseUrl: service.baseUrl,
      ...(store === 'sqlite' ? {} : { countStatements: () => committedTransactions(databaseUrl) }),
      dir,
      sqliteFile,
      stop: async () => {
        await service.stop();
        await dropDatabase();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await dropDatabase();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
