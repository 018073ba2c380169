/**
 * Which machines a queued job can go to. Pure functions over plain facts, so the routing rules are tested
 * without machines:
 *
 * - `machine_ids`: the machine is one of them.
 * - `material`: the machine has that filament material loaded — its `loaded_filament_idx` filament, or,
 *   when it names none (an AMS, a multi-tool head), any of its filaments. What the machine reports about
 *   itself (a Bambu AMS) wins over the configuration.
 * - `nozzle_diameter`: equal to the machine's (within a micrometre).
 * - `machine_type`: equal.
 * - the design: what machines/prints.ts says the machine can print, the same rule as a direct print's.
 */

import type { QueueConstraints } from '../jobs/job.js';
import type { MachineType, ReportedHardware } from '../machines/machine.js';
import { type DesignNeeds, designRefusal, type MachinePrints } from '../machines/prints.js';
import type { MachineRegistry, RegisteredMachine } from '../machines/registry.js';

export type { DesignNeeds } from '../machines/prints.js';

export interface MachineFacts {
  id: string;
  machineType: MachineType;
  nozzleDiameter: number | null;
  /** Materials counted as loaded (see the module comment). */
  materials: string[];
  prints: MachinePrints;
}

/** The routing facts of a configured machine, preferring what it reports about its own hardware. */
export function factsOf(
  registry: MachineRegistry,
  entry: RegisteredMachine,
  reported: ReportedHardware | undefined,
): MachineFacts {
  const { nozzleDiameter, filaments, loadedFilamentIdx } = reported ?? entry.common;
  const loaded = loadedFilamentIdx !== null ? filaments[loadedFilamentIdx] : undefined;
  const materials = loaded ? [loaded.material.type] : filaments.map((filament) => filament.material.type);
  return {
    id: entry.id,
    machineType: entry.machine.identity().machineType,
    nozzleDiameter,
    materials: [...new Set(materials)],
    prints: registry.prints(entry),
  };
}

/** Why the machine cannot take the job, or null when it can. */
export function refusal(
  machine: MachineFacts,
  constraints: QueueConstraints,
  design: DesignNeeds | null,
): string | null {
  if (constraints.machine_ids && !constraints.machine_ids.includes(machine.id))
    return 'not among machine_ids';
  if (constraints.machine_type && constraints.machine_type !== machine.machineType) {
    return `is ${machine.machineType}, not ${constraints.machine_type}`;
  }
  if (constraints.material && !machine.materials.includes(constraints.material)) {
    return `has ${machine.materials.length ? machine.materials.join(', ') : 'no filament'} loaded, not ${constraints.material}`;
  }
  if (
    constraints.nozzle_diameter !== undefined &&
    (machine.nozzleDiameter === null || Math.abs(machine.nozzleDiameter - constraints.nozzle_diameter) > 1e-3)
  ) {
    return `has a ${machine.nozzleDiameter ?? 'unknown'} mm nozzle, not ${constraints.nozzle_diameter} mm`;
  }
  return design ? designRefusal(machine.prints, design) : null;
}

/** The ids of the machines that can take the job. */
export function candidates(
  machines: readonly MachineFacts[],
  constraints: QueueConstraints,
  design: DesignNeeds | null,
): string[] {
  return machines.filter((machine) => refusal(machine, constraints, design) === null).map((m) => m.id);
}

/** Why no configured machine can take the job: one reason per machine, for the 400 message. */
export function explainNoCandidate(
  machines: readonly MachineFacts[],
  constraints: QueueConstraints,
  design: DesignNeeds | null,
): string {
  if (machines.length === 0) return 'no machine is configured';
  const unknown = (constraints.machine_ids ?? []).filter((id) => !machines.some((m) => m.id === id));
  const reasons = machines
    .filter((machine) => !constraints.machine_ids || constraints.machine_ids.includes(machine.id))
    .map((machine) => `"${machine.id}" ${refusal(machine, constraints, design)}`);
  if (unknown.length) reasons.unshift(`no machine with id ${unknown.map((id) => `"${id}"`).join(', ')}`);
  return `no configured machine could ever take this job: ${reasons.slice(0, 20).join('; ')}${reasons.length > 20 ? '; …' : ''}`;
}
