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
 * - the design: G-code goes anywhere (it is placed already); a mesh needs a machine with a slicer, and it
 *   must fit that machine's build volume.
 */

import type { DesignKind } from '../design/inspect.js';
import type { QueueConstraints } from '../jobs/job.js';
import type { MachineType, ReportedHardware, Volume } from '../machines/machine.js';
import type { MachineRegistry, RegisteredMachine } from '../machines/registry.js';

export interface MachineFacts {
  id: string;
  machineType: MachineType;
  nozzleDiameter: number | null;
  /** Materials counted as loaded (see the module comment). */
  materials: string[];
  hasSlicer: boolean;
  maxPartVolume: Volume | null;
}

/** What a design needs from a machine. */
export interface DesignNeeds {
  kind: DesignKind;
  /** Width × depth × height in mm; null for G-code. */
  size: Volume | null;
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
    hasSlicer: entry.common.slicer !== null,
    maxPartVolume: registry.maxPartVolume(entry),
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
  if (design && design.kind !== 'gcode') {
    if (!machine.hasSlicer) return `has no slicer, so it prints G-code only (the design is ${design.kind})`;
    if (design.size && machine.maxPartVolume && !fits(design.size, machine.maxPartVolume)) {
      return `build volume ${millimetres(machine.maxPartVolume)} is smaller than the design (${millimetres(design.size)})`;
    }
  }
  return null;
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

function fits(size: Volume, volume: Volume): boolean {
  // Sub-micron slack: binary STL coordinates are float32.
  const slack = 1e-3;
  return (
    size.width <= volume.width + slack &&
    size.depth <= volume.depth + slack &&
    size.height <= volume.height + slack
  );
}

function millimetres(volume: Volume): string {
  const mm = (n: number) => `${Math.round(n * 100) / 100}`;
  return `${mm(volume.width)} × ${mm(volume.depth)} × ${mm(volume.height)} mm`;
}
