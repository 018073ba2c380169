/**
 * A small pool of worker threads for design work (worker.ts): measuring uploads and copying 3MF
 * archives for the slicer. Each worker has a memory ceiling; a task that is cancelled, or a worker that
 * runs out of memory, ends that worker (a new one is started for the next task), so a hostile design can
 * cost at most one worker's ceiling and never stalls the event loop. At most `threads` tasks run at once,
 * the others wait in order. Workers start with a task, and one left idle for `idleExitMs` exits: a quiet
 * service does not keep their memory (10–20 MB resident each). (Hand-rolled rather than a pool library:
 * workers must also start from the TypeScript sources under the test runner, which a library's worker
 * bootstrap cannot do.)
 */

import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ConcurrencyLimit } from '../concurrency-limit.js';
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
  private readonly slots: ConcurrencyLimit;
  private readonly memoryMib: number;
  private readonly idleExitMs: number;
  private readonly idle: Worker[] = [];
  /** The exit timer of each idle worker. */
  private readonly idleTimers = new Map<Worker, NodeJS.Timeout>();
  private readonly busy = new Set<Worker>();
  private closed = false;

  constructor(options: DesignWorkersOptions) {
    this.limits = options.limits;
    this.slots = new ConcurrencyLimit(options.threads ?? availableParallelism());
    this.memoryMib = options.memoryMib ?? DEFAULT_MEMORY_MIB;
    this.idleExitMs = options.idleExitMs ?? DEFAULT_IDLE_EXIT_MS;
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

  /** Ends every worker; running tasks reject. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.idle, ...this.busy];
    for (const timer of this.idleTimers.values()) clearTimeout(timer);
    this.idleTimers.clear();
    this.idle.length = 0;
    this.busy.clear();
    await Promise.all(all.map((worker) => worker.terminate()));
  }

  private run(request: WorkerRequest, signal?: AbortSignal): Promise<unknown> {
    return this.slots.run(() => this.runOnWorker(request, signal), signal);
  }

  private runOnWorker(request: WorkerRequest, signal?: AbortSignal): Promise<unknown> {
    signal?.throwIfAborted();
    if (this.closed) throw new ServiceError(503, 'ShuttingDown', 'the service is shutting down');
    const worker = this.idle.pop() ?? this.spawn();
    clearTimeout(this.idleTimers.get(worker));
    this.idleTimers.delete(worker);
    worker.ref();
    this.busy.add(worker);
    return new Promise<unknown>((resolve, reject) => {
      const cleanUp = () => {
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        signal?.removeEventListener('abort', onAbort);
        this.busy.delete(worker);
      };
      const discard = () => {
        cleanUp();
        void worker.terminate();
      };
      const onMessage = (reply: WorkerReply) => {
        cleanUp();
        if (this.closed) void worker.terminate();
        else this.park(worker);
        if (reply.ok) resolve(reply.value);
        else if (reply.status < 500) reject(rebuild(reply));
        else reject(new Error(`design worker failed: ${reply.message}`));
      };
      const onError = (error: Error & { code?: string }) => {
        discard();
        reject(
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? new InvalidDesign(
                `measuring this design needed more than ${this.memoryMib} MiB of memory; simplify or split it`,
              )
            : error,
        );
      };
      const onExit = (code: number) => {
        discard();
        reject(new Error(`design worker exited with code ${code}`));
      };
      const onAbort = () => {
        discard();
        reject(signal?.reason);
      };
      worker.on('message', onMessage);
      worker.once('error', onError);
      worker.once('exit', onExit);
      signal?.addEventListener('abort', onAbort, { once: true });
      worker.postMessage(request);
    });
  }

  /** Keeps a worker for the next task, and ends it if none comes within `idleExitMs`. */
  private park(worker: Worker): void {
    worker.unref();
    this.idle.push(worker);
    const timer = setTimeout(() => {
      this.idleTimers.delete(worker);
      const index = this.idle.indexOf(worker);
      if (index === -1) return;
      this.idle.splice(index, 1);
      void worker.terminate();
    }, this.idleExitMs);
    timer.unref();
    this.idleTimers.set(worker, timer);
  }

  private spawn(): Worker {
    const worker = this.start();
    // An idle worker that dies is simply dropped; a busy one reports through its task's listeners.
    worker.on('error', () => undefined);
    worker.on('exit', () => {
      clearTimeout(this.idleTimers.get(worker));
      this.idleTimers.delete(worker);
      const index = this.idle.indexOf(worker);
      if (index !== -1) this.idle.splice(index, 1);
    });
    return worker;
  }

  private start(): Worker {
    const resourceLimits = { maxOldGenerationSizeMb: this.memoryMib, maxYoungGenerationSizeMb: 16 };
    const here = import.meta.url;
    if (!here.endsWith('.ts')) return new Worker(new URL('./worker.js', here), { resourceLimits });
    // Running from the TypeScript sources (tests, tsx): the worker compiles its module with tsx too.
    // `require.resolve` finds the CommonJS entry; the ESM one sits beside it.
    const tsxApi = createRequire(here)
      .resolve('tsx/esm/api')
      .replace(/\.cjs$/, '.mjs');
    const tsx = pathToFileURL(tsxApi).href;
    const worker = new URL('./worker.ts', here).href;
    const bootstrap = `import(${JSON.stringify(tsx)}).then((api) => (api.tsImport ?? api.default.tsImport)(${JSON.stringify(worker)}, ${JSON.stringify(here)}))`;
    return new Worker(bootstrap, { eval: true, resourceLimits });
  }
}
