/**
 * Any instance answers for the whole farm, at farm speed: two instances on one PostgreSQL database, 100
 * simulated machines each, `GET /machines` on one of them with an API key (all 200 machines, half of them
 * from its in-memory mirror of the other instance), and `GET /queue` on one of them with 50 jobs waiting,
 * queued through both. Only when MACHINE_API_BENCH_DATABASE_URL names a PostgreSQL server (a database is
 * created for each scenario and dropped after it).
 */

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Scenario } from '../../../bench/scenario.js';
import { type RunningService, startService } from '../../../bench/service-process.js';

const cli = new URL('../bin/machine-api.js', import.meta.url).pathname;
const MACHINES_PER_INSTANCE = 100;
const WAITING = 50;
const GCODE = 'G28\nG1 X10 Y10 Z0.2 F3000\nG1 X20 E1\n';

async function onServer(databaseUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** 100 Noop machines named `<instance>-NNN`; `a-000` prints for an hour, so jobs queued for it wait. */
function instanceConfig(name: string, auth: 'keys' | 'off'): string {
  const machines = Array.from(
    { length: MACHINES_PER_INSTANCE },
    (_, i) =>
      `[machines.${name}-${String(i).padStart(3, '0')}]\ntype = "Noop"\nnozzle_diameter = 0.4\n` +
      (i === 0 ? 'print_seconds = 3600\n' : ''),
  );
  return `[server]\nmdns = false\nauth = "${auth}"\ninstance = "${name}"\n\n${machines.join('\n')}`;
}

const NAME = 'machine-api GET /machines (2 instances × 100 Noop, PostgreSQL)';

/**
 * Without keys, and with a key (whose ratio to the first is the price of the key check on PostgreSQL); the
 * farm's queue.
 */
export function farmViewScenarios(): Scenario[] {
  const server = process.env.MACHINE_API_BENCH_DATABASE_URL;
  if (!server) return [];
  return [
    farmView(server, 'off', NAME),
    { ...farmView(server, 'keys', `${NAME} with an API key`), twin: NAME },
    farmQueue(server),
  ];
}

function farmView(server: string, auth: 'keys' | 'off', name: string): Scenario {
  return {
    name,
    async prepare() {
      const farm = await startFarm(server, auth);
      return {
        baseUrl: farm.a,
        request: { path: '/machines', headers: { 'x-api-key': farm.key } },
        notes: { instances: 2, machines: 2 * MACHINES_PER_INSTANCE, auth, store: 'postgres' },
        teardown: farm.stop,
      };
    },
  };
}

/** `GET /queue` on a with 50 jobs waiting for a-000, queued through a and b in turn (no keys). */
function farmQueue(server: string): Scenario {
  return {
    name: `machine-api GET /queue (${WAITING} waiting, 2 instances × 100 Noop, PostgreSQL)`,
    async prepare() {
      const farm = await startFarm(server, 'off');
      try {
        // b admits a job for a-000 once its mirror holds a's machines.
        await waitUntil('b lists the farm', async () => {
          const listed = (await (await fetch(`${farm.b}/machines`)).json()) as unknown[];
          return listed.length === 2 * MACHINES_PER_INSTANCE;
        });
        // One more than WAITING: the first goes to a-000 and prints for an hour, the rest wait for it.
        for (let i = 0; i <= WAITING; i++) {
          const form = new FormData();
          form.append('params', JSON.stringify({ job_name: `job ${i}`, machine_ids: ['a-000'] }));
          form.append('file', new Blob([GCODE]), 'part.gcode');
          const res = await fetch(`${i % 2 === 0 ? farm.a : farm.b}/queue`, { method: 'POST', body: form });
          if (res.status !== 201) throw new Error(`POST /queue answered ${res.status}: ${await res.text()}`);
        }
        await waitUntil(`a lists ${WAITING} waiting jobs`, async () => {
          const waiting = (await (await fetch(`${farm.a}/queue`)).json()) as unknown[];
          return waiting.length === WAITING;
        });
        return {
          baseUrl: farm.a,
          request: { path: '/queue' },
          notes: { instances: 2, machines: 2 * MACHINES_PER_INSTANCE, waiting: WAITING, store: 'postgres' },
          teardown: farm.stop,
        };
      } catch (error) {
        await farm.stop();
        throw error;
      }
    },
  };
}

async function waitUntil(what: string, condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

interface Farm {
  /** Base URLs of instances a (measured) and b. */
  a: string;
  b: string;
  /** A `read` key (made with the CLI, as an operator would). */
  key: string;
  stop(): Promise<void>;
}

/** A database of its own on `server`, instances b and a on it, once a lists b's machines too. */
async function startFarm(server: string, auth: 'keys' | 'off'): Promise<Farm> {
  const dir = mkdtempSync(join(tmpdir(), 'machine-api-bench-farm-'));
  const database = `machine_api_bench_${randomBytes(4).toString('hex')}`;
  await onServer(server, `CREATE DATABASE ${database}`);
  const url = new URL(server);
  url.pathname = `/${database}`;
  const databaseUrl = url.href;
  const services: RunningService[] = [];
  const stop = async () => {
    for (const service of services) await service.stop();
    await onServer(server, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const name of ['b', 'a']) {
      writeFileSync(join(dir, `${name}.toml`), instanceConfig(name, auth));
      services.push(
        await startService(
          cli,
          [
            '--config',
            join(dir, `${name}.toml`),
            '--data-dir',
            join(dir, name),
            '--database-url',
            databaseUrl,
          ],
          '/ping',
        ),
      );
    }
    const key = execFileSync(
      process.execPath,
      [
        cli,
        'keys',
        'create',
        '--name',
        'bench',
        '--scope',
        'read',
        '--data-dir',
        join(dir, 'a'),
        '--database-url',
        databaseUrl,
      ],
      { encoding: 'utf8' },
    ).split('\n')[0] as string;
    const a = services[1] as RunningService;
    // Measure once a lists b's machines too (its mirror has read them).
    const deadline = Date.now() + 30_000;
    for (;;) {
      const listed = (await (
        await fetch(`${a.baseUrl}/machines`, { headers: { 'x-api-key': key } })
      ).json()) as unknown[];
      if (listed.length === 2 * MACHINES_PER_INSTANCE) break;
      if (Date.now() > deadline) throw new Error(`a lists ${listed.length} machines, not 200`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return { a: a.baseUrl, b: (services[0] as RunningService).baseUrl, key, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
