/**
 * The pool of worker threads for design work (worker.ts): measuring uploads and copying 3MF archives for
 * the slicer, run by piscina. Each worker has a memory ceiling; a task that is cancelled, or a worker that
 * runs out of memory, ends that worker (piscina starts a new one for the next task), so a hostile design
 * can cost at most one worker's ceiling and never stalls the event loop. At most `threads` tasks run at
 * once, the others wait in order. Workers start with a task, and one left idle for `idleExitMs` exits: a
 * quiet service does not keep their memory (10–20 MB resident each).
 */

import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { BadRequest, InvalidDesign, ServiceError, SlicingFailed } from '../errors.js';
import { type DesignInfo, scannedGcode } from './inspect.js';
import type { DesignLimits } from './limits.js';
import type { LineScan } from './line-scan.js';

export type WorkerRequest =
  | { task: 'inspect'; path: string; fileName: string; limits: DesignLimits; scanned?: LineScan }
  | { task: 'copy3mf'; path: string; target: string; limits: DesignLimits };

export type WorkerReply =
  | { ok: true; value: unknown }
  | { ok: false; status: number; code: string; message: string };

export interface DesignWorkersOptions {
  limits: DesignLimits;
  /** Tasks running at once (default: the number of CPU cores). */
  threads?: number;
  /** Old-generation heap of each worker, in MiB. */
  memoryMib?: number;
  /** How long a worker may wait for its next task before it exits (default 10 s). */
  idleExitMs?: number;
}

const DEFAULT_MEMORY_MIB = 96;
// Long enough for a burst of uploads to reuse a warm worker (starting one takes tens of milliseconds).
const DEFAULT_IDLE_EXIT_MS = 10_000;

/** A domain error sent back by a worker, as the same class again (callers check with `instanceof`). */
function rebuild(reply: { status: number; code: string; message: string }): ServiceError {
  const known = { InvalidDesign, BadRequest, SlicingFailed }[reply.code];
  return known ? new known(reply.message) : new ServiceError(reply.status, reply.code, reply.message);
}

export class DesignWorkers {
  readonly limits: DesignLimits;
  private readonly memoryMib: number;
  private readonly pool: Piscina<WorkerRequest, WorkerReply>;
  private closed = false;

  constructor(options: DesignWorkersOptions) {
    this.limits = options.limits;
    this.memoryMib = options.memoryMib ?? DEFAULT_MEMORY_MIB;
    const threads = options.threads ?? availableParallelism();
    this.pool = new Piscina({
      ...workerModule(),
      minThreads: 0,
      maxThreads: threads,
      // Queued tasks wait for a free worker instead of sharing one: a worker measures one design at a time.
      concurrentTasksPerWorker: 1,
      idleTimeout: options.idleExitMs ?? DEFAULT_IDLE_EXIT_MS,
      resourceLimits: { maxOldGenerationSizeMb: this.memoryMib, maxYoungGenerationSizeMb: 16 },
    });
  }

  /**
   * Classifies and measures a design (see inspect.ts) off the event loop; `scanned` is the line check the
   * upload stream made (line-scan.ts), if it made one.
   */
  async inspect(
    path: string,
    fileName: string,
    signal?: AbortSignal,
    scanned?: LineScan,
  ): Promise<DesignInfo> {
    // G-code already checked as it streamed in is told from its first bytes here (see scannedGcode).
    const gcode = scanned ? scannedGcode(scanned, fileName, this.limits) : null;
    if (gcode) return gcode;
    const request: WorkerRequest = { task: 'inspect', path, fileName, limits: this.limits };
    if (scanned) request.scanned = scanned;
    return this.run(request, signal) as Promise<DesignInfo>;
  }

  /** Copies a 3MF for the slicer without its settings parts (see threemf-settings.ts) off the event loop. */
  async copy3mf(path: string, target: string, signal?: AbortSignal): Promise<void> {
    await this.run({ task: 'copy3mf', path, target, limits: this.limits }, signal);
  }

  /** Worker threads running now (busy or idle, before their idle timeout). */
  get threadCount(): number {
    return this.pool.threads.length;
  }

  /** Ends every worker; running and waiting tasks reject. */
  async close(): Promise<void> {
    this.closed = true;
    await this.pool.destroy();
  }

  private async run(request: WorkerRequest, signal?: AbortSignal): Promise<unknown> {
    signal?.throwIfAborted();
    if (this.closed) throw new ServiceError(503, 'ShuttingDown', 'the service is shutting down');
    let reply: WorkerReply;
    try {
      reply = await this.pool.run(request, signal ? { signal } : {});
    } catch (error) {
      // An aborted task ends its worker; the caller sees its own abort reason, as with any aborted call.
      if (signal?.aborted) throw signal.reason;
      if ((error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
        throw new InvalidDesign(
          `measuring this design needed more than ${this.memoryMib} MiB of memory; simplify or split it`,
        );
      }
      if (this.closed) throw new ServiceError(503, 'ShuttingDown', 'the service is shutting down');
      throw error;
    }
    if (reply.ok) return reply.value;
    if (reply.status < 500) throw rebuild(reply);
    throw new Error(`design worker failed: ${reply.message}`);
  }
}

/**
 * Where piscina finds worker.ts: the built worker.js, or — running from the TypeScript sources (tests,
 * tsx) — worker.ts itself, loaded through tsx's loader in each worker thread.
 */
function workerModule(): { filename: string; execArgv?: string[] } {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return { filename: fileURLToPath(new URL('./worker.js', here)) };
  return { filename: fileURLToPath(new URL('./worker.ts', here)), execArgv: ['--import', 'tsx'] };
}
