/**
 * The finish photo for job notifications, from the cameras' job photos. A photo is taken when a job ends,
 * a moment after its event: for a finished job whose machine has a camera, the photo is awaited briefly;
 * a job without one (or a camera that fails) is sent without, never later.
 */

import { readFile, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PhotoSource } from './events.js';

/** Larger photos are not attached (Telegram's `sendPhoto` takes 10 MB; Discord and ntfy similar). */
const MAX_PHOTO_BYTES = 8 * 1024 * 1024;
const WAIT_MS = 4000;
const POLL_MS = 200;

export interface PhotoParts {
  /** Where a finished job's photo is, once taken. */
  photoFor(jobId: string): Promise<{ path: string } | null>;
  /** Whether the machine has a camera at all. */
  hasCamera(machineId: string): boolean;
  /** The job's machine and whether it has finished; null when unknown. */
  jobOf(jobId: string): Promise<{ machineId: string | null; finished: boolean } | null>;
}

export function jobPhotoSource(parts: PhotoParts): PhotoSource {
  return async (jobId) => {
    const job = await parts.jobOf(jobId).catch(() => null);
    if (!job?.finished || job.machineId === null || !parts.hasCamera(job.machineId)) return null;
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const photo = await parts.photoFor(jobId);
      if (photo) {
        const info = await stat(photo.path);
        return info.size <= MAX_PHOTO_BYTES ? readFile(photo.path) : null;
      }
      if (Date.now() >= deadline) return null;
      await sleep(POLL_MS, undefined, { ref: false });
    }
  };
}
