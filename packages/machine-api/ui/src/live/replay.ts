/**
 * What a machine page missed before it opened: the machine's temperatures and state changes the service
 * still holds (`GET /events/history`, at least the last hour), merged with what the stream brings live.
 */

import { api, type MachineStateName, must, type Schemas } from '../api/client';
import { readingsSample } from './farm';
import { mergeStates, mergeTemperatures, type StateChange, type TemperatureSample } from './history';

/** One machine ticking once a second for an hour, with room for its state changes. */
const REPLAY_LIMIT = 10_000;

export async function replayMachineHistory(machineId: string): Promise<void> {
  const events = await must(
    api.GET('/events/history', {
      params: {
        query: { machine_id: machineId, types: 'machine.temperatures,machine.state', limit: REPLAY_LIMIT },
      },
    }),
  );
  const samples: TemperatureSample[] = [];
  const changes: StateChange[] = [];
  for (const event of events) {
    const at = Date.parse(event.time);
    if (event.type === 'machine.temperatures') {
      const readings = event.data.temperatures as Record<string, Schemas['TemperatureReading']>;
      samples.push(readingsSample(at, readings));
    } else if (event.type === 'machine.state') {
      const state = event.data.state as { state: MachineStateName; message?: string | null } | undefined;
      if (state) changes.push({ at, state: state.state, message: state.message ?? null });
    }
  }
  mergeTemperatures(machineId, samples);
  mergeStates(machineId, changes);
}
