/**
 * What the page knows about the farm: the machines and the recent jobs, loaded once and then kept current
 * from the service's answers (and, once connected, its event stream). Components read these signals and
 * re-render when they change; nothing here polls.
 */

import { computed, signal } from '@preact/signals';
import { api, type Job, type JobStatus, type Machine, must, type Schemas } from '../api/client';
import { recordState, recordTemperature, type TemperatureSample } from './history';

type Readings = Readonly<Record<string, Schemas['TemperatureReading']>>;

export const machines = signal<readonly Machine[]>([]);
/** Latest readings per machine, by sensor (`extruder`, `bed`, …): loaded, then from `machine.temperatures`. */
export const temperatures = signal<ReadonlyMap<string, Readings>>(new Map());
export const jobs = signal<ReadonlyMap<string, Job>>(new Map());
/** The temperature presets of the configuration (`GET /presets`), for the cards' buttons. */
export const presets = signal<readonly Schemas['TemperaturePreset'][]>([]);
/** Counts `queue.changed` events: the queue page reads the queue again when it changes. */
export const queueVersion = signal(0);
/** Null until the first load finished; then the error of the last load, if it failed. */
export const loadState = signal<'loading' | 'loaded' | { error: string }>('loading');

/** Statuses of a job that holds its machine. */
const ACTIVE: readonly JobStatus[] = ['slicing', 'uploading', 'printing'];

/** Reads the machines and the most recent jobs from the service. */
export async function loadFarm(): Promise<void> {
  try {
    const [list, recent, named] = await Promise.all([
      must(api.GET('/machines')),
      must(api.GET('/jobs', { params: { query: { limit: 200 } } })),
      must(api.GET('/presets')),
    ]);
    machines.value = list;
    presets.value = named;
    jobs.value = new Map(recent.map((job) => [job.id, job]));
    const now = Date.now();
    const readings = new Map<string, Readings>();
    for (const machine of list) {
      if (machine.state)
        recordState(machine.id, { at: now, state: machine.state.state, message: failure(machine) });
      if (machine.temperatures) {
        readings.set(machine.id, machine.temperatures);
        recordReadings(machine.id, now, machine.temperatures);
      }
    }
    temperatures.value = readings;
    loadState.value = 'loaded';
  } catch (error) {
    loadState.value = { error: (error as Error).message };
  }
}

/** Adds one sample of the nozzle (`extruder`) and bed readings to the machine's chart history. */
export function recordReadings(machineId: string, at: number, readings: Readings): void {
  recordTemperature(machineId, readingsSample(at, readings));
}

/** The chart's sample of one set of readings: the nozzle (`extruder`) and the bed. */
export function readingsSample(at: number, readings: Readings): TemperatureSample {
  return {
    at,
    nozzle: readings.extruder?.current ?? null,
    nozzleTarget: readings.extruder?.target ?? null,
    bed: readings.bed?.current ?? null,
    bedTarget: readings.bed?.target ?? null,
  };
}

function failure(machine: Machine): string | null {
  return machine.state?.state === 'failed' ? (machine.state.message ?? null) : null;
}

/** Replaces one machine's record (an action's answer, an event). */
export function putMachine(machine: Machine): void {
  const list = machines.value;
  const index = list.findIndex((entry) => entry.id === machine.id);
  machines.value =
    index === -1 ? [...list, machine] : list.map((entry, i) => (i === index ? machine : entry));
}

/** Adds or replaces one job's record, unless the one known is newer (an answer overtaken by an event). */
export function putJob(job: Job): void {
  const known = jobs.value.get(job.id);
  if (known && known.updated_at > job.updated_at) return;
  const next = new Map(jobs.value);
  next.set(job.id, job);
  jobs.value = next;
}

export function machineById(id: string): Machine | undefined {
  return machines.value.find((machine) => machine.id === id);
}

/** The job currently holding each machine (slicing, uploading or printing). */
export const currentJobs = computed(() => {
  const byMachine = new Map<string, Job>();
  for (const job of jobs.value.values()) {
    // A queued job has no machine yet.
    if (ACTIVE.includes(job.status) && job.machine_id !== null) byMachine.set(job.machine_id, job);
  }
  return byMachine;
});
