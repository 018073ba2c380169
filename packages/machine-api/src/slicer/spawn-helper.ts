/**
 * The slicer starter: a small process (forked once by spawner.ts) that starts slicer processes on request
 * and reports back. Node's `spawn` forks the calling process synchronously, and forking the service (a
 * hundred-odd MB, many threads) stalled its event loop for milliseconds to tens of milliseconds under
 * load per slicer start; forking this process costs next to nothing. It imports nothing of the service.
 *
 * Messages in: `{ id, command, args, tailChars }` starts a process (its own process group, nice 19, stdout
 * and stderr piped); `{ id, kill: true }` SIGKILLs its group. Messages out, per id and in order:
 * `{ id, pid }` once started, `{ id, error: { code, message } }` if it could not be started, and
 * `{ id, close: { code, signal, stdout, stderr } }` with the last `tailChars` of each output once it ended.
 * When the service goes away (the IPC channel closes) this process exits; the slicers it started run on,
 * as they would have beside a service killed outright (the next start ends them, see killLeftoverSlicer).
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import { killGroup } from './process-group.js';

export interface StartMessage {
  id: number;
  command: string;
  args: string[];
  tailChars: number;
}

export interface KillMessage {
  id: number;
  kill: true;
}

export type HelperReport =
  | { id: number; pid: number }
  | { id: number; error: { code?: string; message: string } }
  | {
      id: number;
      close: { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };
    };

/**
 * Slicers run at nice 19, the lowest priority: two of them can take every core for seconds, and the API
 * (machine lists, events, uploads) must answer in milliseconds meanwhile. At nice 10 a slicer still weighs
 * a tenth of the service in the scheduler (110 against 1024) and kept the service waiting for a core:
 * `GET /machines` p99 51 ms beside two slicers (bench/results/quiet-run-2026-11-24.md); at 19 it weighs
 * 15, so the service's wake-ups take the core at once. Nice only matters under contention: on an otherwise
 * idle host the slicer still gets every idle cycle and is not slower. Set right after the fork, before
 * PrusaSlicer starts its worker threads, which inherit it.
 */
const SLICER_NICENESS = 19;

/** Keeps only the last `limit` characters of a child's output. */
class OutputTail {
  private text = '';
  constructor(private readonly limit: number) {}
  push(chunk: Buffer): void {
    this.text = (this.text + chunk.toString('utf8')).slice(-this.limit);
  }
  toString(): string {
    return this.text;
  }
}

const children = new Map<number, ChildProcess>();

function report(message: HelperReport): void {
  process.send?.(message);
}

function start({ id, command, args, tailChars }: StartMessage): void {
  // Its own process group: stopping it stops whatever it started too, and a signal sent to the
  // service's group (Ctrl-C) leaves it to the service to stop.
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  if (child.pid !== undefined) {
    try {
      setPriority(child.pid, SLICER_NICENESS);
    } catch {
      // It already exited: its own outcome is reported instead.
    }
    report({ id, pid: child.pid });
  }
  children.set(id, child);
  const stdout = new OutputTail(tailChars);
  const stderr = new OutputTail(tailChars);
  child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
  child.once('error', (error: NodeJS.ErrnoException) => {
    report({ id, error: { code: error.code, message: error.message } });
  });
  child.once('close', (code, signal) => {
    children.delete(id);
    report({ id, close: { code, signal, stdout: stdout.toString(), stderr: stderr.toString() } });
  });
}

process.on('message', (message: StartMessage | KillMessage) => {
  if ('kill' in message) {
    const child = children.get(message.id);
    if (child) killGroup(child.pid) || child.kill('SIGKILL');
    return;
  }
  start(message);
});
process.on('disconnect', () => process.exit(0));
