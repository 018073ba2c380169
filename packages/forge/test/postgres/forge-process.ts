// Real `forge` processes (the CLI, run from source through tsx) for the PostgreSQL scale-out tests.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const cli = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
const run = promisify(execFile);

export interface ForgeProcess {
  url: string;
  /** Lines the process printed on stdout (the one-time administrator password among them). */
  printed: string[];
  stop(): Promise<void>;
  /** SIGKILL: the process dies wherever it is, as in a crash. */
  kill(): Promise<void>;
}

/** Starts `forge serve` on a free port and resolves once it logged that it listens. */
export function spawnForge(options: {
  dataDir: string;
  databaseUrl: string;
  /** A config file passed as `--config`. */
  configFile?: string;
}): Promise<ForgeProcess> {
  const config = options.configFile ? ['--config', options.configFile] : [];
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', cli, 'serve', '--bind', '127.0.0.1:0', '--data-dir', options.dataDir, ...config],
    { env: { ...process.env, FORGE_DATABASE_URL: options.databaseUrl }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const printed: string[] = [];
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.stdout?.on('data', (chunk) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        printed.push(line);
        const url = listeningUrl(line);
        if (url) resolve({ url, printed, stop: () => stop(child), kill: () => stop(child, 'SIGKILL') });
      }
    });
    child.once('exit', (code) => reject(new Error(`forge exited with ${code} before listening: ${stderr}`)));
  });
}

function listeningUrl(line: string): string | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const entry = JSON.parse(line) as { msg?: string; url?: string };
    return entry.msg === 'forge listening' ? entry.url : undefined;
  } catch {
    return undefined;
  }
}

function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

/** Runs `forge <args…>` to completion; resolves with its exit code and output. */
export async function runForgeCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', cli, ...args], {
      env: { ...process.env, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? 1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}
