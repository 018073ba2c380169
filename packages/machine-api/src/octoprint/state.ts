/**
 * A machine's status and current job in OctoPrint's words: the printer state (`api/printer`, the push
 * channel's `current.state`), temperatures, and the job with its progress (`api/job`). Pure functions:
 * the routes and the push channel (sockjs.ts) give them what the observer and the job runner know.
 */

import type { Job } from '../jobs/job.js';
import type { MachineStatus } from '../machines/machine.js';
import type { OctoPrintJob, OctoPrintPrinter } from './schemas/printer.js';

/** OctoPrint's state text for a machine state; the queue (no status) always reads as ready. */
export function stateText(status: MachineStatus | null): string {
  switch (status?.state.state ?? 'idle') {
    case 'running':
      return 'Printing';
    case 'paused':
      return 'Paused';
    case 'offline':
      return 'Offline';
    case 'unknown':
      // Not read yet since the service started: OctoPrint says the same while it connects.
      return 'Connecting';
    case 'failed':
      return 'Error';
    default:
      return 'Operational';
  }
}

/** Sensor names as OctoPrint spells them: `extruder` → `tool0`, `extruderN` → `toolN`, `bed`, `chamber`. */
function octoPrintSensor(sensor: string): string | null {
  if (sensor === 'bed' || sensor === 'chamber') return sensor;
  if (sensor === 'extruder') return 'tool0';
  const tool = /^extruder(\d+)$/.exec(sensor);
  return tool ? `tool${tool[1]}` : null;
}

export type OctoPrintTemperatures = OctoPrintPrinter['temperature'];

export function temperaturesOf(status: MachineStatus | null): OctoPrintTemperatures {
  const temperature: OctoPrintTemperatures = {};
  for (const [sensor, reading] of Object.entries(status?.temperatures ?? {})) {
    const name = octoPrintSensor(sensor);
    if (name) temperature[name] = { actual: reading.current, target: reading.target, offset: 0 };
  }
  return temperature;
}

export function printerStateOf(status: MachineStatus | null): OctoPrintPrinter['state'] {
  const text = stateText(status);
  const operational = text !== 'Offline' && text !== 'Error' && text !== 'Connecting';
  return {
    text,
    flags: {
      operational,
      printing: text === 'Printing',
      paused: text === 'Paused',
      pausing: false,
      cancelling: false,
      resuming: false,
      finishing: false,
      sdReady: false,
      error: text === 'Error',
      // Ready for a new job: idle, with nothing left on the bed to clear.
      ready: text === 'Operational' && (status === null || status.state.state === 'idle'),
      closedOrError: !operational,
    },
    ...(status?.state.state === 'failed' && status.state.message ? { error: status.state.message } : {}),
  };
}

/** `api/printer`: temperatures and state. */
export function printerOf(status: MachineStatus | null): OctoPrintPrinter {
  return { temperature: temperaturesOf(status), state: printerStateOf(status), sd: { ready: false } };
}

/** `api/job`: the job the machine runs (null fields without one) and its progress. */
export function jobOf(status: MachineStatus | null, job: Job | null, now = Date.now()): OctoPrintJob {
  const printing = job !== null && job.status === 'printing';
  const completion = printing ? (status?.progress ?? null) : null;
  // The job turns `printing` when the machine starts it; that moment is its last update while it prints.
  const printTime = printing ? Math.max(0, Math.round((now - Date.parse(job.updatedAt)) / 1000)) : null;
  const estimated = job?.estimate?.printTimeSeconds ?? null;
  let printTimeLeft: number | null = null;
  let printTimeLeftOrigin: string | null = null;
  if (printing && completion !== null && estimated !== null) {
    printTimeLeft = Math.max(0, Math.round(estimated * (1 - completion / 100)));
    printTimeLeftOrigin = 'estimate';
  } else if (printing && completion !== null && completion > 0 && printTime !== null) {
    printTimeLeft = Math.max(0, Math.round((printTime * (100 - completion)) / completion));
    printTimeLeftOrigin = 'linear';
  }
  const state = printerStateOf(status);
  return {
    job: {
      file: {
        name: job?.fileName ?? null,
        path: job?.fileName ?? null,
        display: job?.fileName ?? null,
        origin: job ? 'local' : null,
        size: job?.fileSize ?? null,
        date: job ? Math.floor(Date.parse(job.createdAt) / 1000) : null,
      },
      estimatedPrintTime: estimated,
      averagePrintTime: null,
      lastPrintTime: null,
      filament: null,
      user: job?.owner ?? null,
    },
    progress: {
      completion,
      filepos: null,
      printTime,
      printTimeLeft,
      printTimeLeftOrigin,
    },
    state: state.text,
    ...(state.error ? { error: state.error } : {}),
  };
}
