/**
 * From what Moonraker reports (Klippy's state and the `print_stats`, `virtual_sdcard`, `extruder` and
 * `heater_bed` printer objects) to the service's `MachineState`, progress and temperatures. Pure
 * functions, so the mapping is tested without a printer.
 */

import type { MachineState, Temperature } from '../machine.js';
import type { ObjectStatus } from './client.js';

/** The parts of `print_stats` this backend reads (docs/printer_objects.md#print_stats). */
export interface PrintStats {
  state: string;
  filename: string;
  message: string;
  /** mm of filament the print pushed (Klipper's own count); null when not a plausible number. */
  filamentUsed?: number | null;
}

export function printStatsOf(objects: ObjectStatus): PrintStats | null {
  const stats = objects['print_stats'];
  if (!stats || typeof stats['state'] !== 'string') return null;
  return {
    state: stats['state'],
    filename: typeof stats['filename'] === 'string' ? stats['filename'] : '',
    message: typeof stats['message'] === 'string' ? stats['message'] : '',
    filamentUsed: plausibleLength(stats['filament_used']),
  };
}

/** A length in mm from the device: finite, not negative, under 100 km; else unknown (never clamped). */
function plausibleLength(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 1e8 ? value : null;
}

/** Klipper's end states of a job: it accepts a new `SDCARD_PRINT_FILE` from each of them. */
export function isEndState(printState: string): boolean {
  return printState === 'complete' || printState === 'cancelled' || printState === 'error';
}

/**
 * The machine state for a reachable Moonraker.
 *
 * - Klippy not `ready`: `disconnected` → offline (the host answers, the printer does not),
 *   `startup` → unknown, `error`/`shutdown` → failed with Klippy's message.
 * - Klippy ready, from `print_stats.state` (reference §6): standby → idle, printing → running,
 *   paused → paused, complete/cancelled → complete, error → failed(print_stats.message), else unknown.
 * - A finished print (`complete`, `cancelled`) stays `complete` until the bed is confirmed clear: the
 *   service's `POST /machines/{id}/clear` (or Mainsail/Fluidd's "clear") sends `SDCARD_RESET_FILE`, and
 *   Klipper reads `standby` again. Reporting idle as soon as the service saw its own job end would tell a
 *   queue the bed is free when nobody looked (the anchor's issue #68).
 */
export function machineStateOf(
  klippyState: string,
  klippyMessage: string,
  stats: PrintStats | null,
): MachineState {
  switch (klippyState) {
    case 'ready':
      break;
    case 'disconnected':
      return { state: 'offline' };
    case 'error':
    case 'shutdown':
      return { state: 'failed', message: klippyMessage || `Klipper is in the ${klippyState} state` };
    default:
      return { state: 'unknown' };
  }
  if (!stats) return { state: 'unknown' };
  switch (stats.state) {
    case 'standby':
      return { state: 'idle' };
    case 'printing':
      return { state: 'running' };
    case 'paused':
      return { state: 'paused' };
    case 'complete':
    case 'cancelled':
      return { state: 'complete' };
    case 'error':
      return { state: 'failed', message: stats.message || null };
    default:
      return { state: 'unknown' };
  }
}

/** Percent of the file printed while a job is printing or paused; null otherwise. */
export function progressOf(objects: ObjectStatus, stats: PrintStats | null): number | null {
  if (!stats || (stats.state !== 'printing' && stats.state !== 'paused')) return null;
  const progress = objects['virtual_sdcard']?.['progress'];
  if (typeof progress !== 'number' || !Number.isFinite(progress)) return null;
  // Two decimals: 0.3 × 100 is 30.000000000000004 in floating point.
  return Math.round(Math.min(1, Math.max(0, progress)) * 10_000) / 100;
}

/** `extruder` and `bed` (from `heater_bed`, when the printer has one), as the anchor exports them. */
export function temperaturesOf(objects: ObjectStatus): Record<string, Temperature> {
  const temperatures: Record<string, Temperature> = {};
  for (const [sensor, object] of [
    ['extruder', 'extruder'],
    ['bed', 'heater_bed'],
  ] as const) {
    const fields = objects[object];
    const current = fields?.['temperature'];
    if (typeof current !== 'number') continue;
    const target = fields?.['target'];
    temperatures[sensor] = { current, target: typeof target === 'number' ? target : null };
  }
  return temperatures;
}

/** Merges a `notify_status_update` diff into the full status (only changed fields are sent). */
export function mergeStatus(into: ObjectStatus, diff: ObjectStatus): void {
  for (const [name, fields] of Object.entries(diff)) {
    if (!fields || typeof fields !== 'object') continue;
    into[name] = { ...(into[name] ?? {}), ...fields };
  }
}
