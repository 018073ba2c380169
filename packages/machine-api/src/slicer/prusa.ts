/**
 * PrusaSlicer (2.5, headless CLI) as a `Slicer`. One process per slice, with the machine's ini, at most
 * `maxConcurrentSlices` at once across the whole service; a run that exceeds its timeout or whose job is
 * cancelled is killed. Failures carry the slicer's own message, never its whole log.
 */

import { spawn } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { availableParallelism, setPriority } from 'node:os';
import { dirname, join } from 'node:path';
import { BadRequest, SlicingFailed } from '../errors.js';
import { estimateFromTrailer, readGcodeTrailer } from './estimate.js';
import { ConcurrencyLimit } from './limiter.js';
import { bedBounds, readProfile } from './profile.js';
import type { SliceRequest, SliceResult, Slicer, SlicerConfig } from './slicer.js';

export const DEFAULT_SLICE_TIMEOUT_SECONDS = 600;
export const INSTALL_HINT = 'apt-get install -y prusa-slicer';

/** Shared by every PrusaSlicer of the process: slicing is CPU-bound, one run per core by default. */
const sliceSlots = new ConcurrencyLimit(availableParallelism());

/** Sets how many slicer processes may run at once (the default is the number of CPU cores). */
export function setMaxConcurrentSlices(limit: number): void {
  sliceSlots.setLimit(limit);
}

/** Slicer runs in progress and waiting for a slot. */
export function slicerLoad(): { running: number; waiting: number } {
  return sliceSlots.load;
}

/** `/usr/bin/prusa-slicer` when present (Debian's package), else whatever `prusa-slicer` is on PATH. */
function prusaExecutable(): string {
  return existsSync('/usr/bin/prusa-slicer') ? '/usr/bin/prusa-slicer' : 'prusa-slicer';
}

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

function lowerPriority(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    setPriority(pid, SLICER_NICENESS);
  } catch {
    // The slicer already exited (e.g. not installed): its own outcome is reported instead.
  }
}

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

const OUTPUT_TAIL_CHARS = 16 * 1024;
const MESSAGE_CHARS = 400;

export class PrusaSlicer implements Slicer {
  private readonly timeoutMs: number;

  constructor(private readonly config: SlicerConfig) {
    this.timeoutMs = (config.timeoutSeconds ?? DEFAULT_SLICE_TIMEOUT_SECONDS) * 1000;
  }

  async slice(request: SliceRequest): Promise<SliceResult> {
    const args = await this.arguments(request);
    const pidFile = join(dirname(request.outputPath), PID_FILE);
    await sliceSlots.run(() => this.run(args, pidFile, request.signal), request.signal);
    const written = await stat(request.outputPath).catch(() => null);
    if (!written || written.size === 0)
      throw new SlicingFailed('PrusaSlicer finished without writing G-code');
    return {
      gcodePath: request.outputPath,
      estimate: estimateFromTrailer(await readGcodeTrailer(request.outputPath)),
    };
  }

  private async arguments(request: SliceRequest): Promise<string[]> {
    const profile = await readProfile(this.config.config).catch((error: NodeJS.ErrnoException) => {
      throw new SlicingFailed(
        `cannot read the slicer profile ${this.config.config}: ${error.code ?? error.message}`,
      );
    });
    const args = ['--loglevel', '1', '--load', this.config.config];
    const center = bedCenter(profile.get('bed_shape')) ?? volumeCenter(request.buildVolume);
    if (center) args.push('--center', `${round(center.x)},${round(center.y)}`);
    const extruders = (profile.get('nozzle_diameter') ?? '').split(',').length;
    const index = request.filamentIndex ?? 0;
    // A single-extruder profile prints whatever filament is loaded (an AMS slot is chosen by the machine).
    if (extruders > 1) {
      if (index >= extruders) {
        throw new BadRequest(
          `filament_idx ${index} is out of range: the slicer profile has ${extruders} extruders`,
        );
      }
      args.push('--extruder', String(index + 1));
    }
    args.push('--export-gcode', '--output', request.outputPath, request.designPath);
    return args;
  }

  private run(args: string[], pidFile: string, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      signal?.throwIfAborted();
      // Its own process group: stopping it stops whatever it started too, and a signal sent to the
      // service's group (Ctrl-C) leaves it to the service to stop.
      const child = spawn(prusaExecutable(), args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      lowerPriority(child.pid);
      // Recorded in the job's work dir so that a start after a crash can end it (killLeftoverSlicer).
      if (child.pid !== undefined) writeFileSync(pidFile, String(child.pid));
      const stdout = new OutputTail(OUTPUT_TAIL_CHARS);
      const stderr = new OutputTail(OUTPUT_TAIL_CHARS);
      child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
      let stoppedBecause: 'timeout' | 'abort' | null = null;
      const stop = (reason: 'timeout' | 'abort') => {
        stoppedBecause ??= reason;
        killGroup(child.pid) || child.kill('SIGKILL');
      };
      const timer = setTimeout(() => stop('timeout'), this.timeoutMs);
      const onAbort = () => stop('abort');
      signal?.addEventListener('abort', onAbort, { once: true });
      const cleanUp = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        rmSync(pidFile, { force: true });
      };
      child.once('error', (error: NodeJS.ErrnoException) => {
        cleanUp();
        reject(
          error.code === 'ENOENT'
            ? new SlicingFailed(`prusa-slicer is not installed on this host (${INSTALL_HINT})`)
            : new SlicingFailed(`cannot start prusa-slicer: ${error.message}`),
        );
      });
      child.once('close', (code, signalName) => {
        cleanUp();
        if (stoppedBecause === 'abort') return reject(signal?.reason);
        if (stoppedBecause === 'timeout') {
          return reject(
            new SlicingFailed(`slicing took longer than ${this.timeoutMs / 1000} s and was stopped`),
          );
        }
        if (code === 0) return resolve();
        const said = slicerMessage(`${stderr}\n${stdout}`);
        const how = signalName ? `was killed by ${signalName}` : `failed with exit code ${code}`;
        const hint = signalName === 'SIGABRT' && !said ? ' (the part probably does not fit the bed)' : '';
        reject(new SlicingFailed(`PrusaSlicer ${how}${hint}${said ? `: ${said}` : ''}`));
      });
    });
  }
}

const PID_FILE = 'slicer.pid';

/** SIGKILLs the process group led by `pid`; false when there is none. */
function killGroup(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(-pid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}

/**
 * Ends the slicer a previous run of the service recorded in `workDir` and left running (it was killed
 * before it could stop it). The pid is only trusted while it still names a PrusaSlicer process, so a
 * recycled pid is never killed. Returns the pid it stopped, or null.
 */
export async function killLeftoverSlicer(workDir: string): Promise<number | null> {
  const pid = Number.parseInt(await readFile(join(workDir, PID_FILE), 'utf8').catch(() => ''), 10);
  if (!Number.isInteger(pid) || pid <= 1) return null;
  const command = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  if (!/prusa-slicer/i.test(command)) return null;
  return killGroup(pid) ? pid : null;
}

/**
 * The lines of PrusaSlicer's output that explain a failure: log lines of level error/fatal/warning and
 * plain messages, without timestamps, progress lines or trace noise; the last few, capped in length.
 */
export function slicerMessage(output: string): string {
  const lines: string[] = [];
  for (const raw of output.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    const logged = /^\[[^\]]*\]\s*\[[^\]]*\]\s*\[(\w+)\]\s*(.*)$/.exec(line);
    if (logged) {
      if (['error', 'fatal', 'warning'].includes(logged[1] ?? '') && logged[2]) lines.push(logged[2]);
      continue;
    }
    if (/^\d+ => /.test(line) || line.startsWith('Slicing result exported')) continue;
    lines.push(line);
  }
  const unique = [...new Set(lines)].slice(-3).join('; ');
  return unique.length > MESSAGE_CHARS ? `${unique.slice(0, MESSAGE_CHARS)}…` : unique;
}

/** Centre of the profile's bed, null when the profile has no `bed_shape`. */
function bedCenter(shape: string | undefined): { x: number; y: number } | null {
  const bed = bedBounds(shape);
  return bed ? { x: (bed.minX + bed.maxX) / 2, y: (bed.minY + bed.maxY) / 2 } : null;
}

function volumeCenter(volume: SliceRequest['buildVolume']): { x: number; y: number } | null {
  return volume ? { x: volume.width / 2, y: volume.depth / 2 } : null;
}

function round(value: number): string {
  return String(Math.round(value * 1000) / 1000);
}
