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

/** Build volume from `bed_shape` (polygon of `XxY` points) and `max_print_height`; null when absent. */
export async function buildVolumeFromProfile(iniPath: string): Promise<Volume | null> {
  const profile = await readProfile(iniPath);
  const shape = profile.get('bed_shape');
  const height = Number(profile.get('max_print_height'));
  if (!shape || !Number.isFinite(height) || height <= 0) return null;
  const points = shape.split(',').map((point) => point.split('x').map(Number));
  const xs = points.map(([x]) => x ?? Number.NaN);
  const ys = points.map(([, y]) => y ?? Number.NaN);
  if ([...xs, ...ys].some((n) => !Number.isFinite(n))) return null;
  return { width: Math.max(...xs) - Math.min(...xs), depth: Math.max(...ys) - Math.min(...ys), height };
}
