/** From a merged `push_status` report to the service's `MachineStatus` (machine-api §6). */

import type { MachineState, MachineStatus, Temperature } from '../machine.js';
import { listField, numberField, objectField, type Report, stringField } from './report.js';
import { stageName } from './stages.js';

/** `gcode_state` values during which a job is on the printer. */
export const ACTIVE_GCODE_STATES = new Set(['PREPARE', 'SLICING', 'RUNNING', 'PAUSE']);

/**
 * The printer's state. FINISH and FAILED are idle, as in the anchor: the printer takes the next job
 * without anyone touching it, and the outcome belongs to the job, not to the machine.
 */
export function machineState(report: Report): MachineState {
  switch (stringField(report, 'gcode_state')) {
    case 'IDLE':
    case 'FINISH':
    case 'FAILED':
      return { state: 'idle' };
    case 'PREPARE':
    case 'SLICING':
    case 'RUNNING':
      return { state: 'running' };
    case 'PAUSE':
      return { state: 'paused' };
    default:
      return { state: 'unknown' };
  }
}

/** Bambu error codes are shown to users as 8 hex digits in two groups, e.g. `0300-400C`. */
export function formatPrintError(code: number): string {
  const hex = (code >>> 0).toString(16).toUpperCase().padStart(8, '0');
  return `${hex.slice(0, 4)}-${hex.slice(4)}`;
}

const MATERIALS: Record<string, string> = {
  PLA: 'pla',
  'PLA-S': 'pla_support',
  'PLA-CF': 'composite',
  ABS: 'abs',
  PETG: 'petg',
  TPU: 'tpu',
  PVA: 'pva',
  HIPS: 'hips',
  PA: 'nylon',
  PAHT: 'nylon',
  'PA-CF': 'composite',
  'PAHT-CF': 'composite',
  'PETG-CF': 'composite',
};

interface Tray {
  /** Global tray number as the printer counts it in `tray_now`: AMS unit × 4 + slot, 254 = external spool. */
  tray: number;
  material: { type: string };
  name?: string;
  color?: string;
  /** Percent of filament left, when the AMS knows (−1 from the printer means it does not). */
  remaining: number | null;
}

function trayFrom(report: Report, tray: number): Tray | null {
  const type = stringField(report, 'tray_type');
  if (!type) return null; // an empty slot
  const material = { type: MATERIALS[type.toUpperCase()] ?? 'unknown' };
  const name = stringField(report, 'tray_sub_brands') || undefined;
  // Printers send RRGGBBAA; the service's filament colour is RRGGBB.
  const rawColor = stringField(report, 'tray_color');
  const color =
    rawColor && /^[0-9A-Fa-f]{6,8}$/.test(rawColor) ? rawColor.slice(0, 6).toUpperCase() : undefined;
  const remain = numberField(report, 'remain');
  return {
    tray,
    material,
    ...(name ? { name } : {}),
    ...(color ? { color } : {}),
    remaining: remain !== null && remain >= 0 ? remain : null,
  };
}

function traysOf(report: Report): Tray[] {
  const trays: Tray[] = [];
  const ams = objectField(report, 'ams');
  for (const unit of ams ? listField(ams, 'ams') : []) {
    const unitId = numberField(unit, 'id') ?? 0;
    for (const slot of listField(unit, 'tray')) {
      const tray = trayFrom(slot, unitId * 4 + (numberField(slot, 'id') ?? 0));
      if (tray) trays.push(tray);
    }
  }
  const external = objectField(report, 'vt_tray');
  const externalTray = external ? trayFrom(external, 254) : null;
  if (externalTray) trays.push(externalTray);
  return trays;
}

function temperature(report: Report, current: string, target: string | null): Temperature | null {
  const value = numberField(report, current);
  if (value === null) return null;
  return { current: value, target: target === null ? null : numberField(report, target) };
}

/** The `MachineStatus` a report describes (state, progress, temperatures and the `ExtraKindB` details). */
export function statusFromReport(report: Report): MachineStatus {
  const state = machineState(report);
  const gcodeState = stringField(report, 'gcode_state');
  const printing = gcodeState !== null && ACTIVE_GCODE_STATES.has(gcodeState);

  const temperatures: Record<string, Temperature> = {};
  const sensors: [string, string, string | null][] = [
    ['extruder', 'nozzle_temper', 'nozzle_target_temper'],
    ['bed', 'bed_temper', 'bed_target_temper'],
    ['chamber', 'chamber_temper', null],
  ];
  for (const [sensor, current, target] of sensors) {
    const reading = temperature(report, current, target);
    if (reading) temperatures[sensor] = reading;
  }

  const trays = traysOf(report);
  const ams = objectField(report, 'ams');
  const trayNow = ams ? numberField(ams, 'tray_now') : null;
  const loadedIndex = trayNow === null ? -1 : trays.findIndex((tray) => tray.tray === trayNow);
  const printError = numberField(report, 'print_error');
  const nozzle = report.nozzle_diameter;
  const nozzleDiameter = numberField(report, 'nozzle_diameter');
  const loadedFilamentIdx = loadedIndex === -1 ? null : loadedIndex;

  return {
    state,
    progress: printing ? numberField(report, 'mc_percent') : null,
    temperatures,
    extra: {
      ExtraKindB: {
        current_stage: stageName(report.stg_cur),
        gcode_state: gcodeState,
        nozzle_diameter:
          typeof nozzle === 'number' ? String(nozzle) : typeof nozzle === 'string' ? nozzle : null,
        nozzle_type: stringField(report, 'nozzle_type'),
        job_name: printing ? stringField(report, 'subtask_name') : null,
        layer: printing ? numberField(report, 'layer_num') : null,
        total_layers: printing ? numberField(report, 'total_layer_num') : null,
        remaining_minutes: printing ? numberField(report, 'mc_remaining_time') : null,
        print_error: printError ? formatPrintError(printError) : null,
        filaments: trays,
        loaded_filament_idx: loadedFilamentIdx,
        wifi_signal: stringField(report, 'wifi_signal'),
      },
    },
    ...(nozzleDiameter !== null && nozzleDiameter > 0
      ? {
          hardware: {
            nozzleDiameter,
            filaments: trays.map(({ material, name, color }) => ({
              material,
              ...(name !== undefined ? { name } : {}),
              ...(color !== undefined ? { color } : {}),
            })),
            loadedFilamentIdx,
          },
        }
      : {}),
  };
}

/** Whether an AMS is attached, which decides `use_ams` in `project_file` (as the anchor does). */
export function amsAttached(report: Report | null): boolean {
  const ams = report ? objectField(report, 'ams') : null;
  const bits = ams?.ams_exist_bits;
  return bits !== undefined && bits !== null && String(bits) !== '' && String(bits) !== '0';
}
