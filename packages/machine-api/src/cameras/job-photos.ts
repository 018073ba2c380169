/**
 * A photo of every finished print: when a job that reached the printer completes, fails or is cancelled,
 * a frame of its machine's camera (at most about a second old) is kept as `<data dir>/photos/<job id>.jpg`,
 * written to a temporary name first so that a reader never sees half a photo. Photos older than the
 * retention are removed at start and then daily. `photoFor()` is what the job routes and the
 * notifications read.
 */

import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Job } from '../jobs/job.js';
import { isFinal } from '../jobs/job.js';
import type { CameraService } from './service.js';

const SAFE_ID = /^[A-Za-z0-9_-]{1,100}$/;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface JobPhoto {
  path: string;
  contentType: 'image/jpeg';
  takenAt: Date;
}

export class JobPhotos {
  /** Jobs seen printing: only these have something on the bed worth a photo. */
  private readonly printing = new Set<string>();
  private readonly pending = new Set<Promise<void>>();
  private pruneTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly cameras: CameraService,
    readonly dir: string,
    private readonly options: {
      enabled: boolean;
      retentionDays: number;
      /** How long a camera may take to become known and to answer (`[cameras] timeout_ms`). */
      cameraTimeoutMs: number;
      logger: Logger;
    },
  ) {}

  async start(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await this.prune();
    this.pruneTimer = setInterval(() => void this.prune(), DAY_MS);
    this.pruneTimer.unref();
  }

  /** Follows a job's changes (the runner's `onJobChange` listener). */
  readonly onJobChange = (job: Job): void => {
    if (!this.options.enabled || job.machineId === null) return;
    if (job.status === 'printing') this.printing.add(job.id);
    else if (isFinal(job.status) && this.printing.delete(job.id))
      this.track(this.capture(job.id, job.machineId));
  };

  /**
   * Photographs the prints that a killed run left on their machines, which this run failed at start
   * (jobs/runner.ts `start()`): once each machine's camera is known (a Klipper printer's webcam registry is
   * read after it connects), within the camera timeout. A run that stops normally takes them as it stops.
   */
  photographInterrupted(jobs: readonly Job[]): Promise<void> {
    if (!this.options.enabled) return Promise.resolve();
    const all = jobs.map((job) => this.track(this.afterCameraKnown(job.id, job.machineId!)));
    return Promise.all(all).then(() => undefined);
  }

  private async afterCameraKnown(jobId: string, machineId: string): Promise<void> {
    // The camera service announces no change of what it knows; a short bounded wait asks again instead.
    const deadline = Date.now() + this.options.cameraTimeoutMs;
    while (this.cameras.status(machineId) === null && Date.now() < deadline && !this.stopped) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (!this.stopped) await this.capture(jobId, machineId);
  }

  private track(capture: Promise<void>): Promise<void> {
    const tracked = capture.finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
    return tracked;
  }

  /** The photo of a finished job, or null when none was taken (no camera, or it failed). */
  async photoFor(jobId: string): Promise<JobPhoto | null> {
    if (!SAFE_ID.test(jobId)) return null;
    const path = join(this.dir, `${jobId}.jpg`);
    try {
      const info = await stat(path);
      return { path, contentType: 'image/jpeg', takenAt: info.mtime };
    } catch {
      return null;
    }
  }

  /** Waits for photos being taken (shutdown). */
  async drain(): Promise<void> {
    this.stopped = true;
    clearInterval(this.pruneTimer);
    await Promise.allSettled([...this.pending]);
  }

  /** Takes and keeps the photo; a job without a (working) camera simply has none. Never throws. */
  async capture(jobId: string, machineId: string): Promise<void> {
    if (!SAFE_ID.test(jobId) || this.cameras.status(machineId) === null) return;
    try {
      const jpeg = await this.cameras.snapshot(machineId);
      const temporary = join(this.dir, `.${jobId}.jpg.partial`);
      await writeFile(temporary, jpeg);
      await rename(temporary, join(this.dir, `${jobId}.jpg`));
    } catch (error) {
      this.options.logger.warn(
        { job: jobId, machine: machineId, err: (error as Error).message },
        'no photo of the finished job',
      );
    }
  }

  private async prune(): Promise<void> {
    if (this.options.retentionDays <= 0) return;
    const cutoff = Date.now() - this.options.retentionDays * DAY_MS;
    const names = await readdir(this.dir).catch(() => [] as string[]);
    for (const name of names) {
      const path = join(this.dir, name);
      const info = await stat(path).catch(() => null);
      if (info && info.mtimeMs < cutoff) await rm(path, { force: true });
    }
  }
}
