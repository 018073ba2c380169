/** What Linux says about another process (`/proc/<pid>`): its CPU time and its memory. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

/** User plus system CPU time the process has used so far, in ms. */
export function cpuMs(pid: number): number {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  // Fields after the command name (which may hold spaces, hence the last ')'): utime is the 12th, stime the 13th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
}

/** Resident memory now and its peak since start (`VmRSS`, `VmHWM`), in MB. */
export function residentMB(pid: number): { now: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { now: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** Samples `cpuMs` over a window: call the result to get the CPU used since, as % of one core. */
export function cpuWindow(pid: number): () => number {
  const cpu0 = cpuMs(pid);
  const t0 = performance.now();
  return () => (100 * (cpuMs(pid) - cpu0)) / (performance.now() - t0);
}

/** The value at fraction `q` (0–1) of the sorted samples. */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}
