/**
 * The estimates PrusaSlicer writes near the end of its G-code, e.g.
 * `; estimated printing time (normal mode) = 1d 2h 13m 45s`, `; filament used [mm] = 1491.16, 20.5`,
 * `; filament used [cm3] = 3.59`, `; total filament used [g] = 4.45`.
 */

import { open } from 'node:fs/promises';
import type { SliceEstimate } from './slicer.js';

/** The trailer (estimates + the full config dump) fits well within this many bytes from the end. */
const TRAILER_BYTES = 256 * 1024;

/**
 * The `; key = value` comments at the end of a G-code file: PrusaSlicer's estimates and its config dump
 * (`; nozzle_diameter = 0.4`, `; filament_type = PLA`…). Empty for G-code without such a trailer.
 */
export async function readGcodeTrailer(gcodePath: string): Promise<Map<string, string>> {
  const handle = await open(gcodePath, 'r');
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, TRAILER_BYTES);
    const tail = Buffer.alloc(length);
    await handle.read(tail, 0, length, size - length);
    return parseTrailer(tail.toString('utf8'));
  } finally {
    await handle.close();
  }
}

/** `; key = value` comment lines of G-code text; the first occurrence of a key wins. */
export function parseTrailer(text: string): Map<string, string> {
  const values = new Map<string, string>();
  for (const match of text.matchAll(/^;\s*([^=\n]+?)[ \t]*=[ \t]*(.*?)\s*$/gm)) {
    if (match[1] && match[2] !== undefined && !values.has(match[1])) values.set(match[1], match[2]);
  }
  return values;
}

/** The slicer's estimates among the trailer values; unknown values are null. */
export function estimateFromTrailer(values: Map<string, string>): SliceEstimate {
  const time = values.get('estimated printing time (normal mode)') ?? values.get('estimated printing time');
  return {
    printTimeSeconds: time === undefined ? null : parseDuration(time),
    filamentUsedMm: sumList(values.get('filament used [mm]')),
    filamentUsedCm3: sumList(values.get('filament used [cm3]')),
    filamentUsedGrams: positive(
      sumList(values.get('total filament used [g]') ?? values.get('filament used [g]')),
    ),
  };
}

/** `1d 2h 13m 45s` → seconds; null when nothing in it is a duration. */
export function parseDuration(text: string): number | null {
  const units: Record<string, number> = { d: 86_400, h: 3_600, m: 60, s: 1 };
  let seconds = 0;
  let found = false;
  for (const match of text.matchAll(/(\d+(?:\.\d+)?)\s*([dhms])\b/g)) {
    seconds += Number(match[1]) * (units[match[2] ?? ''] ?? 0);
    found = true;
  }
  return found ? Math.round(seconds) : null;
}

/** Multi-extruder prints list one value per extruder (`12.3, 4.5`); the total is what a user wants. */
function sumList(text: string | undefined): number | null {
  if (text === undefined) return null;
  const numbers = text.split(',').map((part) => Number(part.trim()));
  if (numbers.length === 0 || numbers.some((n) => !Number.isFinite(n))) return null;
  return Math.round(numbers.reduce((a, b) => a + b, 0) * 100) / 100;
}

/** PrusaSlicer prints `0.00` grams when the profile has no filament density: that is "unknown". */
function positive(value: number | null): number | null {
  return value !== null && value > 0 ? value : null;
}
