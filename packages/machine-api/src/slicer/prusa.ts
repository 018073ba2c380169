/**
 * PrusaSlicer (2.5, headless CLI) as a `Slicer`. One process per slice, with the machine's ini, at most
 * `maxConcurrentSlices` at once across the whole service; a run that exceeds its timeout or whose job is
 * cancelled is killed. Failures carry the slicer's own message, never its whole log.
 */

import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { ConcurrencyLimit } from '../concurrency-limit.js';
import { BadRequest, SlicingFailed } from '../errors.js';
import { estimateFromTrailer, readGcodeTrailer } from './estimate.js';
import { killGroup } from './process-group.js';
import { bedBounds, readProfile } from './profile.js';
import type { SliceRequest, SliceResult, Slicer, SlicerConfig } from './slicer.js';
import { runDetached } from './spawner.js';

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
      let stoppedBecause: 'timeout' | 'abort' | null = null;
      let settled = false;
      const cleanUp = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        rmSync(pidFile, { force: true });
      };
      // Started by the slicer starter (spawner.ts): in its own process group, at nice 19 (see
      // spawn-helper.ts), without forking the service.
      const child = runDetached(prusaExecutable(), args, OUTPUT_TAIL_CHARS, {
        // Recorded in the job's work dir so that a start after a crash can end it (killLeftoverSlicer).
        spawned: (pid) => {
          if (!settled) writeFileSync(pidFile, String(pid));
        },
        error: (error) => {
          if (settled) return;
          settled = true;
          cleanUp();
          reject(
            error.code === 'ENOENT'
              ? new SlicingFailed(`prusa-slicer is not installed on this host (${INSTALL_HINT})`)
              : new SlicingFailed(`cannot start prusa-slicer: ${error.message}`),
          );
        },
        close: (code, signalName, stdout, stderr) => {
          if (settled) return;
          settled = true;
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
        },
      });
      const stop = (reason: 'timeout' | 'abort') => {
        stoppedBecause ??= reason;
        child.kill();
      };
      const timer = setTimeout(() => stop('timeout'), this.timeoutMs);
      const onAbort = () => stop('abort');
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

const PID_FILE = 'slicer.pid';

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
