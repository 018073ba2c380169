/**
 * `npm run bench [-- --filter TEXT | --only NAME]`: runs every scenario of both services with autocannon, and the same
 * request against a bare node:http server answering the same bytes, then prints req/s, p50/p95/p99
 * latency (from every response's own time, see measure) and the service/baseline ratios (for data routes
 * also the ratio to the same SQL run directly; for a scenario with a twin, e.g. the PostgreSQL run of a
 * SQLite scenario, the ratio to the twin's req/s), and writes the numbers to bench/results/<timestamp>.json.
 *
 * Each target (baseline, direct SQL if any, service) first serves the request for BENCH_WARMUP_SECONDS
 * (default 1, not counted) so the service is not measured cold (JIT, its caches); that includes
 * POST /print, whose warm-up leaves nothing queued (see docs/benchmarks.md). Then BENCH_ROUNDS
 * (default 3) rounds of baseline → direct → service, each run seconds ÷ rounds long (at least 1 s): on
 * a shared 2-core machine the bare baseline alone swings ±25 % from one minute to the next, and
 * alternating lets such a drift hit every target alike. A target's req/s is its requests over all rounds
 * ÷ its measured seconds; its percentiles are over all its latencies.
 */
import { fork } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { type AnyScenario, type BenchRequest, isMeasured } from './scenario.js';
import { freePort } from './service-process.js';

const here = dirname(fileURLToPath(import.meta.url));

interface Measurement {
  requestsPerSecond: number;
  requests: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
  throughputMBps: number;
}

interface Row {
  scenario: string;
  service: Measurement;
  baseline: Measurement;
  rpsRatio: number;
  p99Ratio: number;
  /** The direct-SQL baseline (data routes only) and the service's req/s ratio to it. */
  direct?: Measurement;
  directRatio?: number;
  /** The scenario's twin (see Scenario.twin) and this row's req/s ratio to the twin's in this run. */
  twin?: string;
  twinRatio?: number;
  /** Database statements per request during the service's measurement (see countStatements). */
  statementsPerRequest?: number;
  notes: Record<string, string | number>;
}

async function loadScenarios(): Promise<AnyScenario[]> {
  const modules = [
    await import('../packages/machine-api/bench/scenarios.js').catch(missingScenarios('machine-api')),
    await import('../packages/forge/bench/scenarios.js').catch(missingScenarios('forge')),
  ];
  return modules.flatMap((module) => module.scenarios);
}

function missingScenarios(pkg: string) {
  return (error: NodeJS.ErrnoException) => {
    if (error.code !== 'ERR_MODULE_NOT_FOUND') throw error;
    process.stderr.write(`(no bench scenarios in ${pkg})\n`);
    return { scenarios: [] as AnyScenario[] };
  };
}

/**
 * Nearest-rank percentile of ascending `sorted` latencies (ms); 0 when there were none.
 */
function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
}

/** A varied request as autocannon's setupRequest takes it (headers replaced, not merged). */
function varied(request: Omit<BenchRequest, 'vary' | 'bodies'>) {
  return {
    method: request.method ?? 'GET',
    path: request.path,
    headers: request.headers ?? {},
    ...(request.body === undefined ? {} : { body: request.body }),
  };
}

/** What a scenario's rounds measure: the bare baseline, the direct SQL server (data routes), the service. */
type Target = 'baseline' | 'direct' | 'service';

/** One autocannon run's raw figures; a target's runs over all rounds are summed by summarize. */
interface Run {
  requests: number;
  /** Seconds the run lasted, as autocannon timed it. */
  seconds: number;
  bytes: number;
  errors: number;
  non2xx: number;
  latencies: number[];
}

/**
 * One autocannon run. The percentiles come from every response's own latency (autocannon's 'response'
 * event, all statuses, as its own histogram records them): its result has no p95, and the issues' latency
 * targets are p95s. A run makes at most a few hundred thousand requests, so a plain array sorts in
 * milliseconds.
 */
async function measure(
  baseUrl: string,
  request: BenchRequest,
  connections: number,
  seconds: number,
): Promise<Run> {
  const { bodies, vary } = request;
  let next = 0;
  const latencies: number[] = [];
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: `${baseUrl}${request.path}`,
        method: request.method ?? 'GET',
        headers: request.headers,
        body: request.body,
        ...(bodies?.length
          ? { requests: [{ setupRequest: (req) => ({ ...req, body: bodies[next++ % bodies.length] }) }] }
          : {}),
        ...(vary ? { requests: [{ setupRequest: (req) => ({ ...req, ...varied(vary()) }) }] } : {}),
        connections,
        duration: seconds,
      },
      (error, done) => (error ? reject(error) : resolve(done)),
    );
    instance.on('response', (_client, _status, _bytes, responseTime) => latencies.push(responseTime));
  });
  return {
    requests: result.requests.total,
    seconds: result.duration,
    bytes: result.throughput.total,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    latencies,
  };
}

/** A target's measurement over all its runs: totals ÷ total measured seconds, percentiles over every latency. */
function summarize(runs: Run[]): Measurement {
  const sum = (field: 'requests' | 'seconds' | 'bytes' | 'errors' | 'non2xx') =>
    runs.reduce((total, run) => total + run[field], 0);
  const sorted = new Float64Array(runs.reduce((n, run) => n + run.latencies.length, 0));
  let offset = 0;
  for (const run of runs) {
    sorted.set(run.latencies, offset);
    offset += run.latencies.length;
  }
  sorted.sort();
  const seconds = Math.max(sum('seconds'), 0.001);
  return {
    requestsPerSecond: sum('requests') / seconds,
    requests: sum('requests'),
    p50Ms: percentile(sorted, 50),
    p95Ms: percentile(sorted, 95),
    p99Ms: percentile(sorted, 99),
    errors: sum('errors'),
    non2xx: sum('non2xx'),
    throughputMBps: sum('bytes') / seconds / 1e6,
  };
}

/** Captures the service's answer to `request` so the baseline can serve exactly the same bytes. */
async function captureResponse(baseUrl: string, request: BenchRequest) {
  const response = await fetch(`${baseUrl}${request.path}`, {
    method: request.method ?? 'GET',
    headers: request.headers,
    body: request.bodies?.[0] ?? request.body,
  });
  const body = Buffer.from(await response.arrayBuffer());
  if (response.status >= 400) {
    throw new Error(`${request.method ?? 'GET'} ${request.path} answered ${response.status}: ${body}`);
  }
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', body };
}

async function startBaseline(status: number, contentType: string, body: Buffer) {
  const file = join(mkdtempSync(join(tmpdir(), 'bench-baseline-')), 'body');
  writeFileSync(file, body);
  const server = await startServer(join(here, 'baseline-server.mjs'), [String(status), contentType, file]);
  return {
    ...server,
    stop: async () => {
      await server.stop();
      rmSync(dirname(file), { recursive: true, force: true });
    },
  };
}

/** Forks a baseline server script with a free port as its first argument and waits for its 'ready'. */
async function startServer(script: string, args: string[]) {
  const port = await freePort();
  const child = fork(script, [String(port), ...args]);
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`baseline exited with ${code}`)));
  });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    stop: () => new Promise<void>((resolve) => child.once('exit', () => resolve()).kill()),
  };
}

function formatTable(rows: Row[]): string {
  const header = [
    'scenario',
    'req/s',
    'base req/s',
    'ratio',
    'direct req/s',
    'vs direct',
    'vs twin',
    'stmts/req',
    'p50 ms',
    'p95 ms',
    'p99 ms',
    'base p95',
    'base p99',
    'p99 ratio',
    'errors',
    'notes',
  ];
  const lines = rows.map((row) => [
    row.scenario,
    row.service.requestsPerSecond.toFixed(0),
    row.baseline.requestsPerSecond.toFixed(0),
    row.rpsRatio.toFixed(2),
    row.direct ? row.direct.requestsPerSecond.toFixed(0) : '-',
    row.directRatio === undefined ? '-' : row.directRatio.toFixed(2),
    row.twinRatio === undefined ? '-' : row.twinRatio.toFixed(2),
    row.statementsPerRequest === undefined ? '-' : row.statementsPerRequest.toFixed(1),
    row.service.p50Ms.toFixed(1),
    row.service.p95Ms.toFixed(1),
    row.service.p99Ms.toFixed(1),
    row.baseline.p95Ms.toFixed(1),
    row.baseline.p99Ms.toFixed(1),
    row.p99Ratio.toFixed(2),
    String(row.service.errors + row.service.non2xx),
    Object.entries(row.notes)
      .map(([k, v]) => `${k}=${v}`)
      .join(' '),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const fmt = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ');
  return [fmt(header), fmt(widths.map((w) => '-'.repeat(w))), ...lines.map(fmt)].join('\n');
}

/** A self-measuring scenario's figures: its name, then one `name: value` line per figure. */
function formatFigures(scenario: string, figures: Record<string, string | number>): string {
  const width = Math.max(0, ...Object.keys(figures).map((name) => name.length));
  const value = (v: string | number) =>
    typeof v === 'number' && !Number.isInteger(v) ? v.toFixed(2) : String(v);
  return [
    scenario,
    ...Object.entries(figures).map(([k, v]) => `  ${`${k}:`.padEnd(width + 1)} ${value(v)}`),
  ].join('\n');
}

/** Average size of the request bodies a scenario sends. */
function requestBodyBytes(request: BenchRequest): number {
  const bodies = request.bodies ?? (request.body === undefined ? [] : [request.body]);
  if (bodies.length === 0) return 0;
  return bodies.reduce((sum, body) => sum + Buffer.byteLength(body), 0) / bodies.length;
}

async function main() {
  const { values } = parseArgs({ options: { filter: { type: 'string' }, only: { type: 'string' } } });
  const defaultSeconds = Number(process.env.BENCH_SECONDS ?? 5);
  const rounds = Math.max(1, Math.round(Number(process.env.BENCH_ROUNDS ?? 3)));
  const warmUpSeconds = Math.max(0, Number(process.env.BENCH_WARMUP_SECONDS ?? 1));
  // --filter TEXT: scenarios whose name contains TEXT; --only NAME: the one scenario named exactly NAME.
  const scenarios = (await loadScenarios()).filter(
    (s) => (!values.filter || s.name.includes(values.filter)) && (!values.only || s.name === values.only),
  );
  const rows: Row[] = [];
  const measured: { scenario: string; figures: Record<string, string | number> }[] = [];
  for (const scenario of scenarios) {
    process.stderr.write(`▶ ${scenario.name}\n`);
    if (isMeasured(scenario)) {
      measured.push({ scenario: scenario.name, figures: await scenario.run({ seconds: defaultSeconds }) });
      continue;
    }
    const prepared = await scenario.prepare();
    try {
      const connections = scenario.connections ?? 32;
      // The scenario's seconds are each target's total, split over the rounds.
      const runSeconds = Math.max(1, (scenario.seconds ?? defaultSeconds) / rounds);
      const answer = await captureResponse(prepared.baseUrl, prepared.request);
      const baseline = await startBaseline(answer.status, answer.contentType, answer.body);
      let directServer: Awaited<ReturnType<typeof startServer>> | undefined;
      try {
        // The direct server runs through all rounds (idle while the others are measured).
        if (prepared.direct) directServer = await startServer(prepared.direct.script, prepared.direct.args);
        const targets: { key: Target; baseUrl: string }[] = [
          { key: 'baseline', baseUrl: baseline.baseUrl },
          ...(directServer ? [{ key: 'direct' as const, baseUrl: directServer.baseUrl }] : []),
          { key: 'service', baseUrl: prepared.baseUrl },
        ];
        // Warm-up: each target serves the request, not counted (JIT, the service's caches, page cache).
        if (warmUpSeconds > 0) {
          for (const target of targets) {
            await measure(target.baseUrl, prepared.request, connections, warmUpSeconds);
          }
        }
        const runs: Record<Target, Run[]> = { baseline: [], direct: [], service: [] };
        let statements = 0;
        for (let round = 0; round < rounds; round++) {
          for (const target of targets) {
            // Statements are counted around the service's runs only: the warm-up's are not.
            const before = target.key === 'service' ? await prepared.countStatements?.() : undefined;
            runs[target.key].push(await measure(target.baseUrl, prepared.request, connections, runSeconds));
            if (before !== undefined) statements += ((await prepared.countStatements?.()) ?? before) - before;
          }
        }
        const baselineResult = summarize(runs.baseline);
        const direct = directServer ? summarize(runs.direct) : undefined;
        const serviceResult = summarize(runs.service);
        const sentBytes = requestBodyBytes(prepared.request);
        const twin = rows.find((row) => row.scenario === scenario.twin);
        const sent = (m: Measurement) => ((m.requestsPerSecond * sentBytes) / 1e6).toFixed(1);
        rows.push({
          scenario: scenario.name,
          service: serviceResult,
          baseline: baselineResult,
          rpsRatio: serviceResult.requestsPerSecond / baselineResult.requestsPerSecond,
          p99Ratio: serviceResult.p99Ms / Math.max(baselineResult.p99Ms, 0.001),
          ...(direct
            ? { direct, directRatio: serviceResult.requestsPerSecond / direct.requestsPerSecond }
            : {}),
          ...(prepared.countStatements && serviceResult.requests > 0
            ? { statementsPerRequest: statements / serviceResult.requests }
            : {}),
          ...(twin
            ? {
                twin: twin.scenario,
                twinRatio: serviceResult.requestsPerSecond / twin.service.requestsPerSecond,
              }
            : {}),
          // Uploads: request bytes per second, the service's and the baseline's.
          notes: {
            ...prepared.notes,
            ...(sentBytes >= 1e6
              ? { 'upload MB/s': sent(serviceResult), 'base MB/s': sent(baselineResult) }
              : {}),
          },
        });
      } finally {
        await directServer?.stop();
        await baseline.stop();
      }
    } finally {
      await prepared.teardown();
    }
  }
  const table = [
    rows.length > 0 ? formatTable(rows) : '',
    ...measured.map(({ scenario, figures }) => formatFigures(scenario, figures)),
  ].join('\n\n');
  process.stdout.write(
    `\n${table}\n\nload average (1/5/15 min): ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );
  const resultsDir = join(here, 'results');
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, `${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    JSON.stringify(
      {
        node: process.version,
        date: new Date().toISOString(),
        loadAverage: loadavg(),
        rounds,
        warmUpSeconds,
        rows,
        measured,
      },
      null,
      2,
    ),
  );
  process.stdout.write(`\nwritten ${file}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : error}\n`);
  process.exit(1);
});
