import { type ChildProcess, spawn } from 'node:child_process';
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

/** Starts a built service CLI (`node <cli> serve …`) as its own process so it does not share our event loop. */
export async function startService(cli: string, args: string[], readyPath: string): Promise<RunningService> {
  const port = await freePort();
  // BENCH_CPU_PROF_DIR=<dir>: every service process writes a V8 CPU profile there when it exits.
  const profile = process.env.BENCH_CPU_PROF_DIR
    ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF_DIR]
    : [];
  const child = spawn(process.execPath, [...profile, cli, 'serve', '--bind', `127.0.0.1:${port}`, ...args], {
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
