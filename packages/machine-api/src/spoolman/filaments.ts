/**
 * The machine's filaments as its spools make them: an assigned spool's filament (name, material, colour
 * from Spoolman) replaces what the configuration or the printer says for its slot. The machine list and
 * the queue's routing facts both read a machine's filaments through here, so they agree.
 */

import type { Filament } from '../config/machine-keys.js';
import { FILAMENT_MATERIALS } from '../machines/machine.js';
import type { Spool } from './client.js';
import type { Assignment } from './store.js';
import { WHOLE_MACHINE } from './tables.js';

export interface MachineFilaments {
  nozzleDiameter: number | null;
  filaments: Filament[];
  loadedFilamentIdx: number | null;
}

/** `base` with each assigned spool's filament in its slot (a machine's one spool: the loaded slot, else 0). */
export function withSpools(base: MachineFilaments, assignments: readonly Assignment[]): MachineFilaments {
  if (assignments.length === 0) return base;
  const filaments = [...base.filaments];
  let loaded = base.loadedFilamentIdx;
  for (const { slot, spool } of assignments) {
    const index = slot === WHOLE_MACHINE ? (base.loadedFilamentIdx ?? 0) : slot;
    if (index > filaments.length) continue;
    filaments[index] = spoolFilament(spool, filaments[index]);
    if (slot === WHOLE_MACHINE) loaded ??= index;
  }
  return { ...base, filaments, loadedFilamentIdx: loaded };
}

/** The material type the service knows for Spoolman's free-text material (`PLA+` is not `pla`: unknown). */
export function materialOf(spool: Spool): string {
  const material = (spool.material ?? '')
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
  return (FILAMENT_MATERIALS as readonly string[]).includes(material) ? material : 'unknown';
}

function spoolFilament(spool: Spool, configured: Filament | undefined): Filament {
  const color = /^[0-9A-Fa-f]{6}/.exec(spool.colorHex ?? '')?.[0];
  return {
    ...configured,
    material: { type: materialOf(spool) },
    ...(spool.name !== null ? { name: spool.name } : {}),
    ...(color !== undefined ? { color: color.toUpperCase() } : {}),
    ...(spool.density !== null ? { density: spool.density } : {}),
    ...(spool.diameter !== null ? { diameter: spool.diameter } : {}),
  };
}
