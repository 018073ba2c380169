/**
 * V8 doubles its young generation (up to two 16 MiB semi-spaces on 64-bit Node 20) each time enough
 * objects survive its scavenges, as nearly everything does while modules load, and an idle process never
 * gets that memory back: start-up alone left 32 MiB of young generation resident before the first request.
 * The CLI keeps it at its initial size while the service starts and restores V8's growth once it listens,
 * so that from then on the young generation is sized by the requests the service actually gets.
 */
import { setFlagsFromString } from 'node:v8';

const FLAG = '--semi-space-growth-factor';
/** V8's default for the flag. */
const DEFAULT_GROWTH = 2;

/** Holds the young generation at its size until the returned function is called (once listening). */
export function holdYoungGeneration(): () => void {
  // An operator who set the flag on the command line keeps their choice.
  if (process.execArgv.some((arg) => arg.startsWith(FLAG) || arg.startsWith('--semi_space_growth_factor'))) {
    return () => undefined;
  }
  setFlagsFromString(`${FLAG}=1`);
  return () => setFlagsFromString(`${FLAG}=${DEFAULT_GROWTH}`);
}
