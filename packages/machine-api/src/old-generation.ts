/**
 * Uploads stream through the service at hundreds of MB/s; the chunk objects that live until their bytes
 * are on disk outlive two scavenges and reach the old generation, which then gains a few MB between
 * mark-compacts. V8 sets the next old-generation limit at 1.1–1.5× the live heap (26 MB under the busy
 * bench), so it kept a mark-compact running every 150–500 ms: half of the service's GC time under upload
 * load. Letting the old generation grow to twice its live size before the next one halved the mark-compact
 * time and cut the process's CPU per upload by a quarter (bench/results/m-busy-2026-11-24d.md), at the
 * price of at most one live heap's worth of memory. Set once the service listens, as young-generation.ts
 * does, so start-up keeps V8's own sizing; an operator's own setting of the flag wins.
 */
import { setFlagsFromString } from 'node:v8';

const FLAG = '--heap-growing-percent';
const GROWING_PERCENT = 100;

export function growOldGenerationByLiveSize(): void {
  if (process.execArgv.some((arg) => arg.startsWith(FLAG) || arg.startsWith('--heap_growing_percent')))
    return;
  setFlagsFromString(`${FLAG}=${GROWING_PERCENT}`);
}
