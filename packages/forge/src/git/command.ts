import { spawn } from 'node:child_process';

/** A git invocation that failed: exit status, signal or output limit, with git's own stderr. */
export class GitCommandError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly exitCode: number | null,
    readonly stderr: string,
    detail?: string,
  ) {
    super(
      `git ${args[0] ?? ''} failed${exitCode === null ? '' : ` (exit ${exitCode})`}: ${detail ?? stderr.trim()}`,
    );
    this.name = 'GitCommandError';
  }
}

export interface GitRunOptions {
  /** `--git-dir` of the (bare) repository; omitted for commands that do not need one. */
  gitDir?: string;
  /** Bytes written to git's stdin, then stdin is closed. */
  input?: string | Buffer;
  /** Extra environment, e.g. author identity for commit-tree. */
  env?: Record<string, string>;
  /** Stdout beyond this many bytes kills git and fails the call (default 32 MiB). */
  maxOutputBytes?: number;
  /** Exit codes that are answers rather than failures (e.g. 1 for `show-ref --verify --quiet`). */
  okExitCodes?: readonly number[];
}

export interface GitResult {
  stdout: string;
  exitCode: number;
}

const DEFAULT_MAX_OUTPUT = 32 * 1024 * 1024;
const MAX_STDERR = 64 * 1024;

/**
 * Environment every git child gets: no user or system config (the server's behaviour must not depend on
 * whoever runs it), no prompts, a fixed locale so messages are stable.
 */
export function gitBaseEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/',
    LANG: 'C',
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
  };
}

/** Runs `git <args>` without a shell, collecting bounded stdout; rejects with GitCommandError on failure. */
export async function runGit(args: readonly string[], options: GitRunOptions = {}): Promise<GitResult> {
  const result = await runGitBytes(args, options);
  return { stdout: result.stdout.toString('utf8'), exitCode: result.exitCode };
}

/** `runGit` with stdout as bytes (blob contents are not text). */
export function runGitBytes(
  args: readonly string[],
  options: GitRunOptions = {},
): Promise<{ stdout: Buffer; exitCode: number }> {
  const fullArgs = options.gitDir ? ['--git-dir', options.gitDir, ...args] : [...args];
  const maxOutput = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  return new Promise((resolve, reject) => {
    const child = spawn('git', fullArgs, {
      env: { ...gitBaseEnv(), ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = '';
    let overflow = false;
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxOutput) {
        overflow = true;
        child.kill('SIGKILL');
        return;
      }
      chunks.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < MAX_STDERR) stderr += chunk.toString('utf8');
    });
    child.on('error', (error: NodeJS.ErrnoException) => {
      const hint = error.code === 'ENOENT' ? 'git is not installed (apt-get install -y git)' : error.message;
      reject(new GitCommandError(args, null, '', hint));
    });
    child.on('close', (code, signal) => {
      if (overflow) {
        reject(new GitCommandError(args, null, stderr, `output exceeded ${maxOutput} bytes`));
        return;
      }
      const exitCode = code ?? -1;
      if (exitCode === 0 || options.okExitCodes?.includes(exitCode)) {
        resolve({ stdout: Buffer.concat(chunks), exitCode });
        return;
      }
      reject(new GitCommandError(args, code, stderr, signal ? `killed by ${signal}` : undefined));
    });
    // A child that exits before reading stdin makes the write fail with EPIPE; the exit code reports it.
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
  });
}

/**
 * Runs `git <args>` and hands back its stdout as a stream (large blobs are sent, not buffered). The
 * child is killed when the stream is destroyed early; a failing git ends the stream with an error.
 */
export function streamGit(args: readonly string[], options: { gitDir: string }): NodeJS.ReadableStream {
  const child = spawn('git', ['--git-dir', options.gitDir, ...args], {
    env: gitBaseEnv(),
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const out = child.stdout;
  out.on('close', () => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  child.on('error', (error) => out.destroy(error));
  child.on('close', (code) => {
    if (code !== 0 && code !== null) out.destroy(new GitCommandError(args, code, ''));
  });
  return out;
}
