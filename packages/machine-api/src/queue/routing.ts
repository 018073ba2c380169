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
 * - the spool (when the job's grams are known and passed in, i.e. when dispatching, never when judging
 *   whether a machine could EVER take a job): a job whose estimate exceeds what the machine's Spoolman
 *   spool has left — its `remaining_weight` less the reports not applied yet, less `[spoolman] margin_g` —
 *   waits. A spool whose remaining weight Spoolman does not know holds nothing back.
 */

import type { Job, QueueConstraints } from '../jobs/job.js';
import type { MachineType, ReportedHardware, Volume } from '../machines/machine.js';
import { type DesignNeeds, designRefusal, type MachinePrints } from '../machines/prints.js';
import type { MachineRegistry, RegisteredMachine } from '../machines/registry.js';
import type { MachineFilaments } from '../spoolman/filaments.js';

export type { DesignNeeds } from '../machines/prints.js';

export interface MachineFacts {
  id: string;
  machineType: MachineType;
  nozzleDiameter: number | null;
  /** Materials counted as loaded (see the module comment). */
  materials: string[];
  prints: MachinePrints;
  /** The spool the machine prints from now, when Spoolman is configured and one is assigned. */
  spool?: SpoolFacts;
}

/** What the queue knows of a machine's spool (last known when Spoolman cannot be reached). */
export interface SpoolFacts {
  id: number;
  /** Spoolman's `remaining_weight` less the use reports not applied yet, g; null when unknown. */
  remainingG: number | null;
  /** `[spoolman] margin_g`. */
  marginG: number;
}

/** The routing facts of a configured machine, preferring what it reports about its own hardware. */
export function factsOf(
  registry: MachineRegistry,
  entry: RegisteredMachine,
  reported: ReportedHardware | MachineFilaments | undefined,
  spool?: SpoolFacts,
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
    ...(spool ? { spool } : {}),
  };
}

/**
 * Whether two lists of facts say the same, field by field (every field of MachineFacts, SpoolFacts and
 * MachinePrints): what a list built from facts is kept under. Cheaper than serialising them per request.
 */
export function sameFacts(a: readonly MachineFacts[], b: readonly MachineFacts[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as MachineFacts;
    const y = b[i] as MachineFacts;
    if (
      x.id !== y.id ||
      x.machineType !== y.machineType ||
      x.nozzleDiameter !== y.nozzleDiameter ||
      !sameList(x.materials, y.materials) ||
      !sameList(x.prints.designKinds, y.prints.designKinds) ||
      !sameVolume(x.prints.maxPartVolume, y.prints.maxPartVolume) ||
      x.spool?.id !== y.spool?.id ||
      x.spool?.remainingG !== y.spool?.remainingG ||
      x.spool?.marginG !== y.spool?.marginG
    ) {
      return false;
    }
  }
  return true;
}

function sameList<T>(a: readonly T[], b: readonly T[]): boolean {
  return a === b || (a.length === b.length && a.every((item, i) => item === b[i]));
}

function sameVolume(a: Volume | null, b: Volume | null): boolean {
  if (a === null || b === null) return a === b;
  return a.width === b.width && a.depth === b.depth && a.height === b.height;
}

/**
 * Why the machine cannot take the job, or null when it can. `grams` is the job's estimate when the spool
 * counts (dispatch, the queue's list); undefined leaves the spool out.
 */
export function refusal(
  machine: MachineFacts,
  constraints: QueueConstraints,
  design: DesignNeeds | null,
  grams?: number | null,
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
  const designRefused = design ? designRefusal(machine.prints, design) : null;
  if (designRefused) return designRefused;
  return grams === undefined ? null : spoolRefusal(machine.spool, grams);
}

/** The spool rule (see the module comment). */
export function spoolRefusal(spool: SpoolFacts | undefined, grams: number | null): string | null {
  if (!spool || spool.remainingG === null || grams === null || !Number.isFinite(grams)) return null;
  const usable = spool.remainingG - spool.marginG;
  if (grams <= usable) return null;
  return `has spool ${spool.id} with ${round(spool.remainingG)} g left (${round(spool.marginG)} g kept as margin), the job needs ${round(grams)} g`;
}

function round(grams: number): number {
  return Math.round(grams * 10) / 10;
}

/** A job's estimated grams, for the spool rule (null when unknown: no spool holds it back). */
export function gramsOf(job: Job): number | null {
  return job.filament?.estimatedG ?? null;
}

/** Which of `machines` (the job's candidates) the spool rule holds the job back from now, and why. */
export function heldBySpool(
  facts: readonly MachineFacts[],
  machines: readonly string[],
  constraints: QueueConstraints,
  design: DesignNeeds | null,
  grams: number | null,
): { machineId: string; reason: string }[] {
  const held: { machineId: string; reason: string }[] = [];
  for (const fact of facts) {
    if (!machines.includes(fact.id)) continue;
    const reason = refusal(fact, constraints, design, grams);
    if (reason !== null) held.push({ machineId: fact.id, reason });
  }
  return held;
}

/** The ids of the machines that can take the job. */
export function candidates(
  machines: readonly MachineFacts[],
  constraints: QueueConstraints,
  design: DesignNeeds | null,
  grams?: number | null,
): string[] {
  return machines.filter((machine) => refusal(machine, constraints, design, grams) === null).map((m) => m.id);
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
