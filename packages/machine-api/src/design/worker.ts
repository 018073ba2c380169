/**
 * The worker thread that measures designs and copies 3MF archives for the slicer (see workers.ts): all
 * CPU-heavy parsing of untrusted files happens here, never on the event loop that answers requests.
 * One task at a time; domain errors travel back as their code and message.
 */

import { parentPort } from 'node:worker_threads';
import { ServiceError } from '../errors.js';
import { inspectDesign } from './inspect.js';
import type { WorkerReply, WorkerRequest } from './workers.js';

async function perform(request: WorkerRequest): Promise<unknown> {
  switch (request.task) {
    case 'inspect':
      return inspectDesign(request.path, request.fileName, request.limits);
    case 'copy3mf': {
      // Loaded on first use, like the 3MF reader in inspect.ts: most workers only measure G-code or STL.
      const { copy3mfWithoutSettings } = await import('../slicer/threemf-settings.js');
      return copy3mfWithoutSettings(request.path, request.target, request.limits);
    }
  }
}

parentPort?.on('message', (request: WorkerRequest) => {
  perform(request).then(
    (value) => parentPort?.postMessage({ ok: true, value } satisfies WorkerReply),
    (error: unknown) => {
      const reply: WorkerReply =
        error instanceof ServiceError
          ? { ok: false, status: error.statusCode, code: error.errorCode, message: error.message }
          : { ok: false, status: 500, code: 'Internal', message: String((error as Error)?.stack ?? error) };
      parentPort?.postMessage(reply);
    },
  );
});
