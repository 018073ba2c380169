/**
 * CPU per request of two forge builds served alternately on the same seeded SQLite data (A/B on a shared
 * machine: the forge process's utime + stime from /proc over a fixed run, divided by requests answered).
 * `npx tsx bench/ab-cpu.ts <dist-a/cli.js> <dist-b/cli.js> [rounds] [seconds]`; FILTER picks scenarios.
 * AB_DATA_DIR=<dir> keeps the seeded data sets there and reuses them on the next run (seeding 100 000
 * users takes longer than a round). BENCH_CPU_PROF_DIR=<dir> makes every forge write a CPU profile.
 * AB_DATABASE_URL=postgres://… seeds and serves PostgreSQL databases `forge_ab_<case>` on that server
 * instead (recreated unless AB_DATA_DIR holds their seed output; left on the server for the next run).
 * Only the forge process's CPU is counted, not the PostgreSQL server's.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startService } from '../../../bench/service-process.js';
import { onServer } from './bench-store.js';
import { seedActions, seedReleases, seedUsers } from './scenarios.js';

const [cliA, cliB, roundsText = '6', secondsText = '3'] = process.argv.slice(2);
const rounds = Number(roundsText);
const seconds = Number(secondsText);

function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime are fields 14 and 15 (1-based) of the whole line: 12 and 13 after "pid (comm) ".
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

async function load(url: string, headers: Record<string, string>, duration: number) {
  return new Promise<autocannon.Result>((resolve, reject) => {
    autocannon({ url, connections: 32, duration, headers }, (error, result) =>
      error ? reject(error) : resolve(result),
    );
  });
}

interface Case {
  name: string;
  /** The forge's data dir and database arguments. */
  args: string[];
  path: string;
  headers: Record<string, string>;
}

const pgServer = process.env.AB_DATABASE_URL;

async function seeded(name: string, seed: (dir: string, url: string) => Promise<unknown>) {
  const keep = process.env.AB_DATA_DIR;
  const dir = keep ? join(keep, pgServer ? `${name}-pg` : name) : mkdtempSync(join(tmpdir(), 'forge-ab-'));
  const outFile = join(dir, 'seed-output.json');
  let databaseUrl = `sqlite:${join(dir, 'forge.db')}`;
  const database = `forge_ab_${name}`;
  if (pgServer) {
    const url = new URL(pgServer);
    url.pathname = `/${database}`;
    databaseUrl = url.href;
  }
  const args = ['--data-dir', dir, ...(pgServer ? ['--database-url', databaseUrl] : [])];
  if (keep && existsSync(outFile)) {
    return { dir, args, out: JSON.parse(readFileSync(outFile, 'utf8')) as unknown };
  }
  mkdirSync(dir, { recursive: true });
  if (pgServer) {
    await onServer(pgServer, `DROP DATABASE IF EXISTS ${database}`);
    await onServer(pgServer, `CREATE DATABASE ${database}`);
  }
  const out = await seed(dir, databaseUrl);
  if (pgServer) await onServer(databaseUrl, 'VACUUM ANALYZE');
  if (keep) writeFileSync(outFile, JSON.stringify(out ?? null));
  return { dir, args, out };
}

const filter = process.env.FILTER ?? '';
const cases: Case[] = [];
if (!filter || /release/.test(filter)) {
  const { args } = await seeded('releases', seedReleases);
  cases.push({
    name: 'releases?limit=50',
    args,
    path: '/api/v1/repos/bench/big/releases?limit=50',
    headers: {},
  });
  cases.push({ name: 'releases/latest', args, path: '/api/v1/repos/bench/big/releases/latest', headers: {} });
}
if (!filter || /user/.test(filter)) {
  const { args, out } = await seeded('users', (_d, url) => seedUsers(url, 100_000));
  cases.push({
    name: 'users/{u} + token',
    args,
    path: '/api/v1/users/user054321',
    headers: { authorization: `token ${out}` },
  });
  cases.push({ name: 'search 10 of 100 000', args, path: '/api/v1/users/search?q=user05000', headers: {} });
}
if (!filter || /feed/.test(filter)) {
  const { args } = await seeded('actions', seedActions);
  cases.push({
    name: 'feeds limit=30',
    args,
    path: '/api/v1/users/bench/activities/feeds?limit=30',
    headers: {},
  });
}

// CASE=<text> keeps only the cases whose name contains it (e.g. `latest`).
for (const c of cases.filter((c) => c.name.includes(process.env.CASE ?? ''))) {
  const results: Record<string, { us: number[]; rps: number[]; p95: number[] }> = {
    A: { us: [], rps: [], p95: [] },
    B: { us: [], rps: [], p95: [] },
  };
  for (let round = 0; round < rounds; round++) {
    for (const [label, cli] of round % 2 === 0
      ? [
          ['A', cliA],
          ['B', cliB],
        ]
      : [
          ['B', cliB],
          ['A', cliA],
        ]) {
      const service = await startService(cli!, c.args, '/api/v1/version');
      try {
        const first = await fetch(`${service.baseUrl}${c.path}`, { headers: c.headers });
        if (first.status !== 200) throw new Error(`${c.name}: ${first.status} ${await first.text()}`);
        await load(`${service.baseUrl}${c.path}`, c.headers, 1);
        const before = cpuMs(service.child.pid!);
        const result = await load(`${service.baseUrl}${c.path}`, c.headers, seconds);
        const used = cpuMs(service.child.pid!) - before;
        const answered = result['2xx'];
        results[label!]!.us.push((used * 1000) / answered);
        results[label!]!.rps.push(answered / seconds);
        results[label!]!.p95.push(result.latency.p97_5 ?? 0);
      } finally {
        await service.stop();
      }
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const line = (label: string) => {
    const r = results[label]!;
    return `${label}: µs/req median ${median(r.us).toFixed(1)} [${r.us.map((v) => v.toFixed(0)).join(' ')}], req/s median ${median(r.rps).toFixed(0)}`;
  };
  console.log(
    `${c.name}\n  ${line('A')}\n  ${line('B')}\n  load ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}`,
  );
}
