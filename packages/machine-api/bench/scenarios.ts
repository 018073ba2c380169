import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AnyScenario } from '../../../bench/scenario.js';
import { startService } from '../../../bench/service-process.js';
import { busyScenario } from './busy.js';
import { eventsScenario } from './events.js';
import { farmScenario } from './farm.js';
import { farmViewScenarios } from './farm-view.js';
import { hostileScenarios } from './hostile.js';
import { queueScenario } from './queue.js';
import { slicingScenario } from './slicing.js';
import { startupScenario } from './startup.js';
import { uploadScenario } from './upload.js';

// The installed command: its #! line carries the service's node flags.
const cli = new URL('../bin/machine-api.js', import.meta.url).pathname;

/** Starts machine-api on a throw-away config and data dir; `server` adds keys to its `[server]` table. */
async function startMachineApi(configToml: string, options: { server?: string; key?: string } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'machine-api-bench-'));
  // No mDNS responder on the network for a benchmark.
  writeFileSync(
    join(dir, 'machine-api.toml'),
    `[server]\nmdns = false\n${options.server ?? ''}\n${configToml}`,
  );
  // A key made with the CLI before start, as an operator would.
  const key = options.key
    ? execFileSync(
        process.execPath,
        [cli, 'keys', 'create', '--name', 'bench', '--scope', options.key, '--data-dir', dir],
        {
          encoding: 'utf8',
        },
      ).split('\n')[0]
    : undefined;
  const service = await startService(
    cli,
    ['--config', join(dir, 'machine-api.toml'), '--data-dir', dir],
    '/ping',
  );
  return {
    baseUrl: service.baseUrl,
    key,
    pid: service.child.pid,
    stop: async () => {
      await service.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `[machines.<prefix>-NN]` Noop tables. */
function noopMachines(prefix: string, count: number, extra = ''): string {
  return Array.from(
    { length: count },
    (_, i) =>
      `[machines.${prefix}-${String(i).padStart(2, '0')}]\ntype = "Noop"\nnozzle_diameter = 0.4\n${extra}`,
  ).join('\n');
}

/** About `bytes` of plausible G-code (a zig-zag of extrusion moves). */
function gcodeOfSize(bytes: number): Buffer {
  const lines: string[] = ['; bench part', 'G28', 'G90', 'M82', 'G92 E0'];
  let size = lines.join('\n').length;
  for (let i = 0; size < bytes; i++) {
    const line = `G1 X${(i % 200) + 10}.${i % 10} Y${(i * 7) % 200}.5 E${(i * 0.0123).toFixed(4)}`;
    lines.push(line);
    size += line.length + 1;
  }
  return Buffer.from(`${lines.join('\n')}\n`);
}

/** A `POST /print` multipart body, as a browser or curl sends it. */
function printBody(boundary: string, machineId: string, design: Buffer): Buffer {
  const params = JSON.stringify({ machine_id: machineId, job_name: 'bench' });
  return Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="params"\r\n\r\n${params}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.gcode"\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    ),
    design,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
}

const UPLOAD_MACHINES = 16;

export const scenarios: AnyScenario[] = [
  {
    name: 'machine-api GET /ping',
    async prepare() {
      const service = await startMachineApi('');
      return { baseUrl: service.baseUrl, request: { path: '/ping' }, teardown: service.stop };
    },
  },
  {
    name: 'machine-api GET /machines (20 Noop)',
    async prepare() {
      const service = await startMachineApi(noopMachines('sim', 20));
      return {
        baseUrl: service.baseUrl,
        request: { path: '/machines' },
        notes: { machines: 20 },
        teardown: service.stop,
      };
    },
  },
  {
    // The same list with auth = "keys": every request authenticates its key against the database (no cache,
    // so a revocation counts at once); the ratio to the scenario above is the price of that.
    name: 'machine-api GET /machines (20 Noop) with an API key',
    async prepare() {
      const service = await startMachineApi(noopMachines('sim', 20), {
        server: 'auth = "keys"\n',
        key: 'read',
      });
      return {
        baseUrl: service.baseUrl,
        request: { path: '/machines', headers: { 'x-api-key': service.key as string } },
        notes: { machines: 20, auth: 'keys' },
        teardown: service.stop,
      };
    },
  },
  {
    // Each request uploads 10 MB of G-code to the next of 16 idle Noop machines (prints take 0 s), so every
    // request is a full job: stream to disk, job record, pass-through, start, completion, cleanup.
    name: 'machine-api POST /print 10 MB G-code (Noop)',
    connections: 8,
    async prepare() {
      const service = await startMachineApi(
        noopMachines('up', UPLOAD_MACHINES, 'print_seconds = 0\nauto_clear = true\n'),
      );
      const design = gcodeOfSize(10 * 1024 * 1024);
      const boundary = '----machine-api-bench';
      const bodies = Array.from({ length: UPLOAD_MACHINES }, (_, i) =>
        printBody(boundary, `up-${String(i).padStart(2, '0')}`, design),
      );
      // The yardstick for uploads: a bare node:http server streaming each body to disk.
      const streamedTo = mkdtempSync(join(tmpdir(), 'machine-api-upload-baseline-'));
      return {
        baseUrl: service.baseUrl,
        request: {
          method: 'POST',
          path: '/print',
          headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
          bodies,
        },
        direct: {
          script: fileURLToPath(new URL('./upload-baseline.ts', import.meta.url)),
          args: [streamedTo],
        },
        notes: { 'file MB': (design.length / 1e6).toFixed(1), direct: 'bare node:http streaming to disk' },
        teardown: async () => {
          await service.stop();
          rmSync(streamedTo, { recursive: true, force: true });
        },
      };
    },
  },
  farmScenario(startMachineApi),
  ...farmViewScenarios(),
  busyScenario(startMachineApi),
  slicingScenario(startMachineApi),
  queueScenario(startMachineApi),
  ...hostileScenarios,
  startupScenario(),
  eventsScenario(startMachineApi),
  uploadScenario(startMachineApi),
];
