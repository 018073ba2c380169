/**
 * How one event of `GET /events` changes what the page knows. Pure bookkeeping on the signals of
 * farm.ts and history.ts; the event types and their data are those the service documents on `EventType`.
 */

import type { Job, Machine, MachineStateName, Schemas } from '../api/client';
import { machineById, putJob, putMachine, queueVersion, recordReadings, temperatures } from './farm';
import { recordState } from './history';

/** One event of the stream; what `data` holds depends on `type` (the service documents it on `EventType`). */
export type FarmEvent = Schemas['Event'];

export function applyEvent(event: FarmEvent): void {
  const at = Date.parse(event.time);
  const machine = event.machine_id ? machineById(event.machine_id) : undefined;
  switch (event.type) {
    case 'machine.state': {
      if (!machine) return;
      const data = event.data as Partial<Machine>;
      putMachine({
        ...machine,
        ...pick(data, ['state', 'ready', 'progress', 'awaiting_clear_since', 'capabilities']),
      });
      const state = data.state as { state: MachineStateName; message?: string | null } | undefined;
      if (state) recordState(machine.id, { at, state: state.state, message: state.message ?? null });
      return;
    }
    case 'machine.progress': {
      if (!machine) return;
      putMachine({ ...machine, progress: event.data.progress as number | null });
      return;
    }
    case 'machine.temperatures': {
      if (!event.machine_id) return;
      const readings = event.data.temperatures as Record<string, Schemas['TemperatureReading']>;
      const next = new Map(temperatures.value);
      next.set(event.machine_id, readings);
      temperatures.value = next;
      recordReadings(event.machine_id, at, readings);
      return;
    }
    case 'job.updated':
      putJob(event.data as unknown as Job);
      return;
    case 'queue.changed':
      queueVersion.value += 1;
      return;
    default:
      return;
  }
}

function pick<T extends object, K extends keyof T>(value: T, keys: K[]): Partial<T> {
  const picked: Partial<T> = {};
  for (const key of keys) if (key in value) picked[key] = value[key];
  return picked;
}
