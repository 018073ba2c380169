/**
 * Start-up with 100 configured machines, half of them unreachable: 50 Noop, 25 Moonraker and 25 Bambu
 * printers whose host accepts the connection and then never answers (the worst kind of unreachable: no
 * refusal to react to, only the machine's own timeout). Measures, from spawning the process:
 * - `listen ms`: until `GET /ping` answers (polled every 5 ms), and the same for a service with no machines
 *   (`listen ms, no machines`): the difference is what the machines cost, the rest is Node loading modules;
 * - `start→listen ms`: what the service itself logs (`startup_ms`, from `startService` to listening);
 * - `all offline ms`: from listening until `GET /machines` shows every unreachable machine `offline`, to
 *   compare with their configured timeout (`timeout ms`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MeasuredScenario } from '../../../bench/scenario.js';
import { freePort, shebangNodeFlags } from '../../../bench/service-process.js';

// The installed command: its #! line carries the service's node flags.
const cli = new URL('../bin/machine-api.js', import.meta.url).pathname;

const NOOP = 50;
const MOONRAKER = 25;
const BAMBU = 25;
const TIMEOUT_SECONDS = 2;

/** A TCP server that accepts every connection and never sends a byte. */
async function hangingHost(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function farmConfig(hangPort: number): string {
  const tables = ['[server]\nmdns = false\n'];
  const pad = (i: number) => String(i).padStart(2, '0');
  for (let i = 0; i < NOOP; i++) {
    tables.push(`[machines.noop-${pad(i)}]\ntype = "Noop"\nnozzle_diameter = 0.4\n`);
  }
  for (let i = 0; i < MOONRAKER; i++) {
    tables.push(
      `[machines.klipper-${pad(i)}]\ntype = "Moonraker"\nendpoint = "http://127.0.0.1:${hangPort}"\n` +
        `variant = "Generic"\nnozzle_diameter = 0.4\nfilaments = []\ntimeout_seconds = ${TIMEOUT_SECONDS}\n`,
    );
  }
  for (let i = 0; i < BAMBU; i++) {
    tables.push(
      `[machines.bambu-${pad(i)}]\ntype = "Bambu"\nname = "X1C ${i}"\naccess_code = "12345678"\n` +
        `host = "127.0.0.1"\nserial = "00M09A35010010${pad(i)}"\nmqtt_port = ${hangPort}\n` +
        `status_timeout_secs = ${TIMEOUT_SECONDS}\ncommand_timeout_secs = ${TIMEOUT_SECONDS}\n`,
    );
  }
  return tables.join('\n');
}

interface Started {
  baseUrl: string;
  child: ChildProcess;
  listenMs: number;
  /** The service's own `startup_ms`, from its "listening" log line. */
  startupMs: Promise<number>;
  stop(): Promise<void>;
}

async function spawnService(configToml: string): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), 'machine-api-startup-'));
  writeFileSync(join(dir, 'machine-api.toml'), `${configToml}\n`);
  const port = await freePort();
  const began = performance.now();
  const child = spawn(
    process.execPath,
    [
      ...shebangNodeFlags(cli),
      cli,
      'serve',
      '--json',
      '--bind',
      `127.0.0.1:${port}`,
      '--config',
      'machine-api.toml',
      '--data-dir',
      '.',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, LOG_LEVEL: 'info' }, cwd: dir },
  );
  const startupMs = new Promise<number>((resolve) => {
    let buffered = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.includes('machine-api listening')) continue;
        resolve(Number((JSON.parse(line) as { startup_ms?: number }).startup_ms ?? Number.NaN));
      }
    });
    child.once('exit', () => resolve(Number.NaN));
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`machine-api exited with ${child.exitCode}`);
    try {
      await fetch(`${baseUrl}/ping`);
      break;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
  return {
    baseUrl,
    child,
    listenMs: performance.now() - began,
    startupMs,
    stop: async () => {
      if (child.exitCode === null) {
        await new Promise<void>((resolve) => child.once('exit', () => resolve()).kill('SIGTERM'));
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface Listed {
  id: string;
  state: { state: string };
}

export function startupScenario(): MeasuredScenario {
  return {
    name: `machine-api start-up (${NOOP + MOONRAKER + BAMBU} machines, ${MOONRAKER + BAMBU} never answer)`,
    kind: 'measured',
    async run() {
      const empty = await spawnService('[server]\nmdns = false\n');
      const emptyListenMs = empty.listenMs;
      await empty.stop();
      const host = await hangingHost();
      const service = await spawnService(farmConfig(host.port));
      const listened = performance.now();
      try {
        const firstAnswerBegan = performance.now();
        const first = (await (await fetch(`${service.baseUrl}/machines`)).json()) as Listed[];
        const firstAnswerMs = performance.now() - firstAnswerBegan;
        const firstStates = countStates(first.filter((m) => !m.id.startsWith('noop-')));
        let allOfflineMs = Number.NaN;
        while (performance.now() - listened < 10 * TIMEOUT_SECONDS * 1000) {
          const listed = (await (await fetch(`${service.baseUrl}/machines`)).json()) as Listed[];
          const unreachable = listed.filter((m) => !m.id.startsWith('noop-'));
          if (unreachable.every((m) => m.state.state === 'offline')) {
            allOfflineMs = performance.now() - listened;
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        return {
          machines: NOOP + MOONRAKER + BAMBU,
          unreachable: MOONRAKER + BAMBU,
          'listen ms': Math.round(service.listenMs),
          'listen ms, no machines': Math.round(emptyListenMs),
          'start→listen ms': await service.startupMs,
          'first GET /machines ms': Math.round(firstAnswerMs),
          'unreachable states in it': firstStates,
          'all offline ms': Math.round(allOfflineMs),
          'timeout ms': TIMEOUT_SECONDS * 1000,
        };
      } finally {
        await service.stop();
        await host.close();
      }
    },
  };
}

function countStates(machines: Listed[]): string {
  const counts = new Map<string, number>();
  for (const machine of machines) counts.set(machine.state.state, (counts.get(machine.state.state) ?? 0) + 1);
  return [...counts].map(([state, count]) => `${state}=${count}`).join(' ');
}
