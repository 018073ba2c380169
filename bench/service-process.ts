import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** A free TCP port on loopback. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Polls `url` until it answers (any status) or the deadline passes. */
export async function waitForHttp(url: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await fetch(url);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs} ms: ${error}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

export interface RunningService {
  baseUrl: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * The node flags on a script's `#!/usr/bin/env -S node <flags>` line: what its executable run passes node
 * (packages/machine-api/bin/machine-api.js keeps its V8 flags there).
 */
export function shebangNodeFlags(script: string): string[] {
  const first = readFileSync(script, 'utf8').split('\n', 1)[0] ?? '';
  const match = /^#!\/usr\/bin\/env -S node((?: \S+)*)$/.exec(first);
  return match?.[1]?.trim().split(' ').filter(Boolean) ?? [];
}

/**
 * Starts a service's command (`node <flags> <entry> serve …`, with the node flags of its #! line, as its
 * executable run gets them) as its own process, so it does not share our event loop.
 */
export async function startService(
  entry: string,
  args: string[],
  readyPath: string,
): Promise<RunningService> {
  const port = await freePort();
  // BENCH_CPU_PROF_DIR=<dir>: every service process writes a V8 CPU profile there when it exits.
  const profile = process.env.BENCH_CPU_PROF_DIR
    ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF_DIR]
    : [];
  const node = [...profile, ...shebangNodeFlags(entry)];
  const child = spawn(process.execPath, [...node, entry, 'serve', '--bind', `127.0.0.1:${port}`, ...args], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, LOG_LEVEL: 'warn' },
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitForHttp(`${baseUrl}${readyPath}`);
  return {
    baseUrl,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
