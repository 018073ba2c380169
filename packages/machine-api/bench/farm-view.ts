/**
 * Any instance answers for the whole farm, at farm speed: two instances on one PostgreSQL database, 100
 * simulated machines each, `GET /machines` on one of them with an API key (all 200 machines, half of them
 * from its in-memory mirror of the other instance). Only when MACHINE_API_BENCH_DATABASE_URL names a
 * PostgreSQL server (a database is created for the run and dropped after it).
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

async function onServer(databaseUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

function instanceConfig(name: string, auth: 'keys' | 'off'): string {
  const machines = Array.from(
    { length: MACHINES_PER_INSTANCE },
    (_, i) => `[machines.${name}-${String(i).padStart(3, '0')}]\ntype = "Noop"\nnozzle_diameter = 0.4\n`,
  );
  return `[server]\nmdns = false\nauth = "${auth}"\ninstance = "${name}"\n\n${machines.join('\n')}`;
}

const NAME = 'machine-api GET /machines (2 instances × 100 Noop, PostgreSQL)';

/** Without keys, and with a key (whose ratio to the first is the price of the key check on PostgreSQL). */
export function farmViewScenarios(): Scenario[] {
  const server = process.env.MACHINE_API_BENCH_DATABASE_URL;
  if (!server) return [];
  return [
    farmView(server, 'off', NAME),
    { ...farmView(server, 'keys', `${NAME} with an API key`), twin: NAME },
  ];
}

function farmView(server: string, auth: 'keys' | 'off', name: string): Scenario {
  return {
    name,
    async prepare() {
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
        return {
          baseUrl: a.baseUrl,
          request: { path: '/machines', headers: { 'x-api-key': key } },
          notes: { instances: 2, machines: 2 * MACHINES_PER_INSTANCE, auth, store: 'postgres' },
          teardown: stop,
        };
      } catch (error) {
        await stop();
        throw error;
      }
    },
  };
}
