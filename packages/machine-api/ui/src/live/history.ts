/**
 * Per-machine history kept by the page from what it is told: temperature readings of the last hour (for
 * the machine page's chart) and state changes. Bounded by age, so a dashboard left open does not grow.
 */

import { signal } from '@preact/signals';
import type { MachineStateName } from '../api/client';

const HOUR_MS = 60 * 60 * 1000;
const MAX_STATE_CHANGES = 200;

export interface TemperatureSample {
  /** Milliseconds since the epoch. */
  at: number;
  nozzle: number | null;
  nozzleTarget: number | null;
  bed: number | null;
  bedTarget: number | null;
}

export interface StateChange {
  at: number;
  state: MachineStateName;
  message?: string | null;
}

export const temperatureLog = signal<ReadonlyMap<string, readonly TemperatureSample[]>>(new Map());
export const stateLog = signal<ReadonlyMap<string, readonly StateChange[]>>(new Map());

export function recordTemperature(machineId: string, sample: TemperatureSample): void {
  const samples = temperatureLog.value.get(machineId) ?? [];
  const since = sample.at - HOUR_MS;
  const kept = samples.filter((entry) => entry.at >= since && entry.at < sample.at);
  const next = new Map(temperatureLog.value);
  next.set(machineId, [...kept, sample]);
  temperatureLog.value = next;
}

/**
 * Merges samples the service kept from before the page opened (`GET /events/history`) with those seen
 * live since, in time order, one per instant, within the last hour.
 */
export function mergeTemperatures(machineId: string, earlier: readonly TemperatureSample[]): void {
  const byTime = new Map<number, TemperatureSample>();
  for (const sample of [...earlier, ...(temperatureLog.value.get(machineId) ?? [])])
    byTime.set(sample.at, sample);
  const merged = [...byTime.values()].sort((a, b) => a.at - b.at);
  const since = (merged[merged.length - 1]?.at ?? 0) - HOUR_MS;
  const next = new Map(temperatureLog.value);
  next.set(
    machineId,
    merged.filter((sample) => sample.at >= since),
  );
  temperatureLog.value = next;
}

/** Like `mergeTemperatures`, for state changes: repeats of the previous state are dropped. */
export function mergeStates(machineId: string, earlier: readonly StateChange[]): void {
  const all = [...earlier, ...(stateLog.value.get(machineId) ?? [])].sort((a, b) => a.at - b.at);
  const kept: StateChange[] = [];
  for (const change of all) {
    const last = kept[kept.length - 1];
    if (!last || last.state !== change.state || last.message !== change.message) kept.push(change);
  }
  const next = new Map(stateLog.value);
  next.set(machineId, kept.slice(-MAX_STATE_CHANGES));
  stateLog.value = next;
}

/** Records `change` unless it repeats the machine's last known state. */
export function recordState(machineId: string, change: StateChange): void {
  const changes = stateLog.value.get(machineId) ?? [];
  const last = changes[changes.length - 1];
  if (last && last.state === change.state && last.message === change.message) return;
  const next = new Map(stateLog.value);
  next.set(machineId, [...changes, change].slice(-MAX_STATE_CHANGES));
  stateLog.value = next;
}
