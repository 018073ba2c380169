/**
 * Starts slicer processes through the slicer starter (spawn-helper.ts), a small process forked on the
 * first slice and kept while the service runs, so that the service itself never forks: Node's `spawn`
 * forks the caller synchronously, and a fork of the service (page tables of a hundred-odd MB, then
 * copy-on-write faults) stalled every waiting request for milliseconds to tens of milliseconds under load.
 * The starter reports what a ChildProcess would: the pid, a failure to start, and the exit code or signal
 * with the tail of the output. If the starter dies, the slicers it started are killed (their runs fail as
 * killed by SIGKILL, runs not yet started fail to start), and the next slice forks a new starter.
 */

import { type ChildProcess, fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { killGroup } from './process-group.js';
import type { HelperReport, KillMessage, StartMessage } from './spawn-helper.js';

export interface RunEvents {
  /** The process started (its own process group, nice 19). */
  spawned(pid: number): void;
  /** It could not be started (or the starter died). */
  error(error: NodeJS.ErrnoException): void;
  /** It ended; stdout and stderr hold the last `tailChars` characters of each. */
  close(code: number | null, signal: NodeJS.Signals | null, stdout: string, stderr: string): void;
}

export interface DetachedRun {
  /** SIGKILLs the process and everything in its group. */
  kill(): void;
}

interface Run {
  events: RunEvents;
  pid?: number;
}

let helper: ChildProcess | null = null;
const runs = new Map<number, Run>();
let nextId = 1;

/** Starts `command` in its own process group at nice 19, with its output piped and its tail kept. */
export function runDetached(
  command: string,
  args: string[],
  tailChars: number,
  events: RunEvents,
): DetachedRun {
  const id = nextId++;
  const run: Run = { events };
  runs.set(id, run);
  const starter = startedHelper();
  holdOpen(starter);
  starter.send({ id, command, args, tailChars } satisfies StartMessage);
  return {
    kill() {
      // The group is known once the pid is: end it from here, without waiting for the starter.
      if (run.pid !== undefined && killGroup(run.pid)) return;
      if (runs.has(id)) helper?.send({ id, kill: true } satisfies KillMessage);
    },
  };
}

function startedHelper(): ChildProcess {
  if (helper) return helper;
  const here = import.meta.url;
  // From the TypeScript sources (tests, tsx) the starter compiles its module with tsx too.
  const fromSources = here.endsWith('.ts');
  const script = new URL(fromSources ? './spawn-helper.ts' : './spawn-helper.js', here);
  const execArgv = fromSources
    ? ['--import', pathToFileURL(createRequire(here).resolve('tsx/esm')).href]
    : [];
  // Its own process group, as the slicers: Ctrl-C in the service's terminal is the service's to handle.
  const child = fork(script, [], {
    execArgv,
    detached: true,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  child.on('message', (message: HelperReport) => onReport(message));
  child.on('error', () => undefined);
  child.once('exit', (code, signal) => {
    if (helper === child) helper = null;
    const error = new Error(`the slicer starter exited (${signal ?? `code ${code}`})`);
    for (const [id, run] of runs) {
      runs.delete(id);
      // A slicer that was running is ended here (no one is left to report its end): it was killed.
      if (run.pid !== undefined) {
        killGroup(run.pid);
        run.events.close(null, 'SIGKILL', '', '');
      } else {
        run.events.error(error);
      }
    }
  });
  helper = child;
  return child;
}

function onReport(message: HelperReport): void {
  const run = runs.get(message.id);
  if (!run) return;
  if ('pid' in message) {
    run.pid = message.pid;
    run.events.spawned(message.pid);
  } else if ('error' in message) {
    const error: NodeJS.ErrnoException = new Error(message.error.message);
    if (message.error.code !== undefined) error.code = message.error.code;
    run.events.error(error);
  } else {
    runs.delete(message.id);
    const { code, signal, stdout, stderr } = message.close;
    run.events.close(code, signal, stdout, stderr);
  }
  if (runs.size === 0 && helper) letGo(helper);
}

/** While a run is in flight the starter keeps the service's event loop alive, as a child process would. */
function holdOpen(child: ChildProcess): void {
  child.ref();
  child.channel?.ref();
}

/** An idle starter does not keep the service running. */
function letGo(child: ChildProcess): void {
  child.unref();
  child.channel?.unref();
}
