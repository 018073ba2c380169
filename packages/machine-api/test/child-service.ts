/**
 * `machine-api serve` in a child process of its own, for the tests that kill it with SIGKILL as a crash or
 * a dying host would (an in-process service cannot be killed that way). Started from the TypeScript
 * sources through tsx, on a free port; resolves once it says where it listens.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { waitFor } from './harness.js';
import { testDatabaseUrl } from './test-database.js';

const cli = new URL('../src/cli.ts', import.meta.url).pathname;

/** Every child started, so that a suite's afterAll can kill what its test left running. */
const children = new Set<ChildProcess>();

export interface ChildService {
  child: ChildProcess;
  url: string;
}

export async function serveInChild(options: {
  config: string;
  dataDir: string;
  databaseUrl?: string | undefined;
}): Promise<ChildService> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      cli,
      'serve',
      '--json',
      '--config',
      options.config,
      '--bind',
      '127.0.0.1:0',
      '--data-dir',
      options.dataDir,
      ...(options.databaseUrl ? ['--database-url', options.databaseUrl] : []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.add(child);
  child.once('exit', () => children.delete(child));
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const url = await waitFor(() => /"url":"(http:\/\/[^"]+)"/.exec(output)?.[1], {
    timeoutMs: 60_000,
    what: `the service to listen (output: ${output})`,
  });
  return { child, url };
}

/**
 * `machine-api serve` as an operator runs it on `dir`: its `machine-api.toml`, data in `dataDir`
 * (`dir/data` by default), and the test run's database for `dir` (PostgreSQL in the postgres project).
 */
export async function serveDirInChild(dir: string, dataDir = join(dir, 'data')): Promise<ChildService> {
  return serveInChild({
    config: join(dir, 'machine-api.toml'),
    dataDir,
    databaseUrl: await testDatabaseUrl(dir),
  });
}

/** Kills the service with SIGKILL, as a crash or a dying host would, and resolves once it is gone. */
export async function crash(service: ChildService): Promise<void> {
  if (service.child.exitCode !== null || service.child.signalCode !== null) return;
  const exited = new Promise((resolve) => service.child.once('exit', resolve));
  service.child.kill('SIGKILL');
  await exited;
}

/** Kills every child still running (for afterAll). */
export function killChildren(): void {
  for (const child of children) child.kill('SIGKILL');
}
