/**
 * The filament of a job: what the slicer's output says it needs (estimated at submission), what it used
 * by its end (the printer's own count where it reports one, else the estimate scaled by the progress
 * reached), and what that cost. Pure functions: the runner feeds them what it read.
 */

import type { Filament } from '../config/machine-keys.js';
import type { FilamentFigures } from '../slicer/filament-comments.js';

/** The `filament` of a job, as recorded. */
export interface JobFilament {
  estimatedG: number | null;
  estimatedM: number | null;
  usedG: number | null;
  usedM: number | null;
  /** Cost of what was used, in `[filament] currency`; null when no price is known. */
  cost: number | null;
  /** The Spoolman spool the job printed from. */
  spoolId: number | null;
  /** The material, for totals by material (`pla`, `petg`…). */
  material: string | null;
  /** Grams per metre of this filament (density × cross-section), to turn a length into a weight. */
  gramsPerMetre: number;
  /** The slicer's cost figure, used when no price is configured. */
  slicerCost: number | null;
  /** Price per kilogram of what it prints from (the spool's, else the machine's filament configuration). */
  pricePerKg: number | null;
}

/** g/cm³ by material, for filaments without a configured `density` (typical datasheet values). */
export const MATERIAL_DENSITY: Record<string, number> = {
  pla: 1.24,
  pla_support: 1.24,
  abs: 1.04,
  asa: 1.07,
  petg: 1.27,
  pet: 1.27,
  nylon: 1.14,
  pa: 1.14,
  pc: 1.2,
  tpu: 1.21,
  pva: 1.23,
  hips: 1.04,
  composite: 1.3,
};
const FALLBACK_DENSITY = 1.24;
const DEFAULT_DIAMETER_MM = 1.75;

/** What the machine's configuration says about the filament a job prints with. */
export interface FilamentSettings {
  material: string | null;
  density: number | null;
  diameter: number | null;
  pricePerKg: number | null;
  /** The Spoolman spool it prints from, if any. */
  spoolId?: number;
}

export function filamentSettings(filament: Filament | undefined): FilamentSettings {
  return {
    material: filament?.material.type ?? null,
    density: filament?.density ?? null,
    diameter: filament?.diameter ?? null,
    pricePerKg: filament?.price_per_kg ?? null,
  };
}

/**
 * The estimate from the slicer's figures. The configured density wins over the slicer's (the user knows
 * their spool), then the material's typical density; a length is turned into grams only with it.
 */
export function estimateFilament(figures: FilamentFigures, settings: FilamentSettings): JobFilament {
  const material = settings.material ?? figures.material;
  const density = settings.density ?? figures.density ?? MATERIAL_DENSITY[material ?? ''] ?? FALLBACK_DENSITY;
  const diameter = settings.diameter ?? figures.diameter ?? DEFAULT_DIAMETER_MM;
  // cm³ per metre = π r² (mm²) × 1000 mm / 1000 mm³/cm³.
  const gramsPerMetre = Math.PI * (diameter / 2) ** 2 * density;
  const metres = figures.millimetres === null ? null : figures.millimetres / 1000;
  const grams =
    figures.grams ??
    (figures.cm3 !== null ? figures.cm3 * density : metres !== null ? metres * gramsPerMetre : null);
  return {
    estimatedG: round(grams, 2),
    estimatedM: round(metres ?? (grams === null ? null : grams / gramsPerMetre), 3),
    usedG: null,
    usedM: null,
    cost: null,
    spoolId: settings.spoolId ?? null,
    material,
    gramsPerMetre,
    slicerCost: figures.cost,
    pricePerKg: settings.pricePerKg,
  };
}

/** How a print ended, as far as the filament is concerned. */
export interface PrintEnd {
  completed: boolean;
  /** The printer's own count of the filament it pushed, in mm (Moonraker `print_stats.filament_used`). */
  reportedMm: number | null;
  /** The highest progress seen, percent. */
  progress: number | null;
}

/** The used amounts and their cost at the end of a print. */
export function usedFilament(filament: JobFilament, end: PrintEnd): JobFilament {
  let usedM: number | null;
  let usedG: number | null;
  if (end.reportedMm !== null) {
    usedM = end.reportedMm / 1000;
    usedG = usedM * filament.gramsPerMetre;
  } else {
    const fraction = end.completed ? 1 : Math.min(1, Math.max(0, (end.progress ?? 0) / 100));
    usedM = filament.estimatedM === null ? null : filament.estimatedM * fraction;
    usedG = filament.estimatedG === null ? null : filament.estimatedG * fraction;
  }
  let cost: number | null = null;
  if (filament.pricePerKg !== null && usedG !== null) cost = (usedG / 1000) * filament.pricePerKg;
  else if (filament.slicerCost !== null && usedG !== null && filament.estimatedG) {
    cost = filament.slicerCost * (usedG / filament.estimatedG);
  }
  return { ...filament, usedG: round(usedG, 2), usedM: round(usedM, 3), cost: round(cost, 2) };
}

function round(value: number | null, digits: number): number | null {
  if (value === null || !Number.isFinite(value)) return null;
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
