/**
 * The worker thread that measures designs and copies 3MF archives for the slicer (see workers.ts): all
 * CPU-heavy parsing of untrusted files happens here, never on the event loop that answers requests.
 * One task at a time; domain errors travel back as their code and message.
 */

import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { ServiceError } from '../errors.js';
import { inspectDesign } from './inspect.js';
import { copy3mfWithoutSettings } from './threemf-settings.js';
import type { WorkerReply, WorkerRequest } from './workers.js';

/**
 * This thread runs at nice 10: checking a 10 MB upload takes it tens of milliseconds of CPU, and with
 * uploads arriving back to back the workers would otherwise take the cores from the event loop that
 * answers every other request (`GET /machines` beside four uploads). An upload is bulk work; its answer
 * may wait for a core, a list may not. Only under contention does it matter.
 */
const WORKER_NICENESS = 10;

try {
  // On Linux the nice value is per thread, and setpriority() given a thread id changes that thread only.
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isInteger(tid) && tid > 0) setPriority(tid, WORKER_NICENESS);
} catch {
  // No /proc/thread-self (not Linux): checks run at the service's priority.
}

async function perform(request: WorkerRequest): Promise<unknown> {
  switch (request.task) {
    case 'inspect':
      return inspectDesign(request.path, request.fileName, request.limits, request.scanned);
    case 'copy3mf':
      return copy3mfWithoutSettings(request.path, request.target, request.limits);
  }
}

/** The task piscina runs (workers.ts): domain errors come back as data, so their class survives the trip. */
export default async function run(request: WorkerRequest): Promise<WorkerReply> {
  try {
    return { ok: true, value: await perform(request) };
  } catch (error) {
    return error instanceof ServiceError
      ? { ok: false, status: error.statusCode, code: error.errorCode, message: error.message }
      : { ok: false, status: 500, code: 'Internal', message: String((error as Error)?.stack ?? error) };
  }
}
