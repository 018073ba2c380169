/**
 * Ending a slicer together with whatever it started. Slicers run in their own process group (see
 * spawn-helper.ts); this module imports nothing, so the slicer starter stays a small process.
 */

/** SIGKILLs the process group led by `pid`; false when there is none. */
export function killGroup(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(-pid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}
