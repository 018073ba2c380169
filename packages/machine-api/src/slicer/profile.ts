/**
 * Facts read from a PrusaSlicer `.ini` profile. The profile's bed is the machine's `max_part_volume`
 * unless the machine config overrides it.
 */

import { readFile } from 'node:fs/promises';
import type { Volume } from '../machines/machine.js';

/** `key = value` pairs of a PrusaSlicer ini (comments and section headers ignored). */
export async function readProfile(path: string): Promise<Map<string, string>> {
  const values = new Map<string, string>();
  for (const line of (await readFile(path, 'utf8')).split(/\r?\n/)) {
    const match = /^\s*([A-Za-z0-9_]+)\s*=\s*(.*?)\s*$/.exec(line);
    if (match?.[1] !== undefined && match[2] !== undefined) values.set(match[1], match[2]);
  }
  return values;
}

export interface BedBounds {
  minX: number;
  maxX: number;
  minY: number;
  maxY: number;
}

/** Extent of a `bed_shape` polygon (`0x0,250x0,250x210,0x210`); null when absent or malformed. */
export function bedBounds(shape: string | undefined): BedBounds | null {
  if (!shape) return null;
  const points = shape.split(',').map((point) => point.split('x').map(Number));
  const xs = points.map(([x]) => x ?? Number.NaN);
  const ys = points.map(([, y]) => y ?? Number.NaN);
  if ([...xs, ...ys].some((n) => !Number.isFinite(n))) return null;
  return { minX: Math.min(...xs), maxX: Math.max(...xs), minY: Math.min(...ys), maxY: Math.max(...ys) };
}

/** Build volume from `bed_shape` and `max_print_height`; null when absent. */
export async function buildVolumeFromProfile(iniPath: string): Promise<Volume | null> {
  const profile = await readProfile(iniPath);
  const bed = bedBounds(profile.get('bed_shape'));
  const height = Number(profile.get('max_print_height'));
  if (!bed || !Number.isFinite(height) || height <= 0) return null;
  return { width: bed.maxX - bed.minX, depth: bed.maxY - bed.minY, height };
}
