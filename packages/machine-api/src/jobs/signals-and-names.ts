/** Two small helpers of the runner: a one-shot abort listener, and a safe extension for work files. */

import { extname } from 'node:path';

/** Runs `listener` once when `signal` aborts (at once if it already has). */
export function onAbort(signal: AbortSignal | undefined, listener: () => void): void {
  if (!signal) return;
  if (signal.aborted) listener();
  else signal.addEventListener('abort', listener, { once: true });
}

/** The upload's extension, lower-cased and reduced to safe characters (the content decides the type). */
export function safeExtension(fileName: string): string {
  const extension = extname(fileName).toLowerCase();
  return /^\.[a-z0-9]{1,8}$/.test(extension) ? extension : '';
}
