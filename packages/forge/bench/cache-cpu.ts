/**
 * forge's CPU per answered request with every response cache on and off, served alternately on the same
 * seeded data: the varied workloads of varied-scenarios.ts (10 000 users with a token each, 1 000
 * repositories). On a shared machine req/s swings with the neighbours' load; the forge process's own
 * CPU time (utime + stime from /proc) per request swings much less, so this is the A/B that decides
 * whether a cache layer pays for itself. Only forge's CPU is counted, not PostgreSQL's.
 * `npx tsx packages/forge/bench/cache-cpu.ts [rounds] [seconds]` (after `npm run build`);
 * FORGE_BENCH_DATABASE_URL=postgres://… runs on a database of that server instead of SQLite.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import type { BenchRequest } from '../../../bench/scenario.js';
import { startService } from '../../../bench/service-process.js';
import { onServer } from './bench-store.js';
import { mixed, seedVaried, tokenLookup } from './varied-scenarios.js';

const [roundsText = '4', secondsText = '5'] = process.argv.slice(2);
const cli = new URL('../dist/cli.js', import.meta.url).pathname;

function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

async function run(url: string, next: () => BenchRequest, seconds: number): Promise<number> {
  const result = await autocannon({
    url,
    connections: 32,
    duration: seconds,
    requests: [
      {
        setupRequest: (request) => {
          const r = next();
          return {
            ...request,
            method: r.method ?? 'GET',
            path: r.path,
            headers: r.headers ?? {},
            ...(r.body ? { body: r.body } : {}),
          };
        },
      },
    ],
  });
  if (result.non2xx > 0) throw new Error(`${result.non2xx} answers were not 2xx`);
  return result.requests.total;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'forge-cache-cpu-'));
  const server = process.env.FORGE_BENCH_DATABASE_URL;
  let databaseUrl = `sqlite:${join(dir, 'forge.db')}`;
  const name = `forge_cache_cpu_${process.pid}`;
  if (server) {
    await onServer(server, `CREATE DATABASE ${name}`);
    const url = new URL(server);
    url.pathname = `/${name}`;
    databaseUrl = url.href;
  }
  try {
    const tokens = await seedVaried(databaseUrl);
    if (server) await onServer(databaseUrl, 'VACUUM ANALYZE');
    const workloads = { 'token lookup': () => tokenLookup(tokens), 'varied workload': () => mixed(tokens) };
    for (const [workload, next] of Object.entries(workloads)) {
      const totals = { on: { cpu: 0, requests: 0 }, off: { cpu: 0, requests: 0 } };
      for (let round = 0; round < Number(roundsText); round++) {
        for (const mode of ['on', 'off'] as const) {
          const config = join(dir, `forge-${mode}.toml`);
          writeFileSync(config, `[cache]\nenabled = ${mode === 'on'}\n`);
          const args = [
            '--data-dir',
            dir,
            '--config',
            config,
            ...(server ? ['--database-url', databaseUrl] : []),
          ];
          const service = await startService(cli, args, '/api/v1/version');
          const pid = service.child.pid!;
          try {
            await run(service.baseUrl, next, 1); // warm-up: JIT, statement caches, kept answers
            const before = cpuMs(pid);
            const requests = await run(service.baseUrl, next, Number(secondsText));
            totals[mode].cpu += cpuMs(pid) - before;
            totals[mode].requests += requests;
          } finally {
            await service.stop();
          }
        }
      }
      const perRequest = (mode: 'on' | 'off') => (1000 * totals[mode].cpu) / totals[mode].requests;
      console.log(
        `${workload} [${server ? 'postgres' : 'sqlite'}]: caches on ${perRequest('on').toFixed(0)} µs CPU/request (${totals.on.requests} requests), off ${perRequest('off').toFixed(0)} µs (${totals.off.requests}); on ÷ off = ${(perRequest('on') / perRequest('off')).toFixed(2)}`,
      );
    }
  } finally {
    if (server) await onServer(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
