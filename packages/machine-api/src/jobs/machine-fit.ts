/**
 * Whether a machine may take a job now (idle; the bed's confirmation is checked by the runner) or have its
 * bed confirmed clear, whether a job's filament index names one of its filaments, and which filament a
 * job is sliced with.
 */

import { BadRequest } from '../errors.js';
import { MachineError, type MachineState, type MachineStatus } from '../machines/machine.js';
import type { RegisteredMachine } from '../machines/registry.js';
import type { Job, JobParameters } from './job.js';

/** Only an idle machine takes a job, as in the anchor; an offline one is reported as such. */
export function assertIdle(machineId: string, state: MachineState): void {
  if (state.state === 'idle') return;
  if (state.state === 'offline')
    throw new MachineError('MachineOffline', `machine "${machineId}" is offline`);
  // A failed machine is not busy: say what is wrong with it, so the person knows what to clear.
  if (state.state === 'failed')
    throw new MachineError(
      'MachineRejected',
      `machine "${machineId}" reports a failure${state.message ? `: ${state.message}` : ''}; clear it before printing`,
    );
  // The device remembers a finished print (Klipper `complete`): a person has to look at the bed.
  if (state.state === 'complete')
    throw new MachineError(
      'MachineNotReady',
      `machine "${machineId}" has finished a print that is still on its bed: remove it, then confirm with POST /machines/${machineId}/clear`,
    );
  throw new MachineError('MachineBusy', `machine "${machineId}" is ${state.state}, not idle`);
}

/** A bed is confirmed clear only on a machine that is not printing, has not failed and answers. */
export function assertClearable(machineId: string, state: MachineState): void {
  if (state.state === 'running' || state.state === 'paused') {
    throw new MachineError(
      'MachineBusy',
      `machine "${machineId}" is ${state.state}; clear its bed once the print has ended`,
    );
  }
  if (state.state === 'failed') {
    throw new MachineError(
      'MachineRejected',
      `machine "${machineId}" reports a failure${state.message ? `: ${state.message}` : ''}; fix it at the machine before confirming the bed clear`,
    );
  }
  if (state.state === 'offline') {
    throw new MachineError(
      'MachineOffline',
      `machine "${machineId}" is offline; the bed cannot be confirmed now`,
    );
  }
}

/** `filament_idx` must name one of the machine's filaments (those it reports, else the configured ones). */
export function assertFilament(
  entry: RegisteredMachine,
  status: MachineStatus | undefined,
  parameters: JobParameters,
): void {
  const index = parameters.slicer_configuration?.filament_idx;
  if (index === undefined || index === null) return;
  const filaments = status?.hardware?.filaments.length ?? entry.common.filaments.length;
  if (index < filaments) return;
  throw new BadRequest(
    `slicer_configuration.filament_idx ${index} does not index a filament of machine "${entry.id}": ` +
      (filaments === 0 ? 'it has no filaments configured' : `it has ${filaments} (0 to ${filaments - 1})`),
  );
}

/**
 * The filament to slice with: the one asked for, else for a queued job with a material constraint the
 * machine's filament of that material (the loaded one first), else the loaded one.
 */
export function filamentIndexFor(job: Job, entry: RegisteredMachine): number | undefined {
  const asked = job.parameters.slicer_configuration?.filament_idx;
  if (asked !== undefined && asked !== null) return asked;
  const loaded = entry.common.loadedFilamentIdx;
  const material = job.constraints?.material;
  if (material) {
    const filaments = entry.common.filaments;
    if (loaded !== null && filaments[loaded]?.material.type === material) return loaded;
    const index = filaments.findIndex((filament) => filament.material.type === material);
    if (index >= 0) return index;
  }
  return loaded ?? undefined;
}
