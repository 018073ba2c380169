/**
 * How much filament a G-code file says it needs, from the comments slicers write:
 *
 * - PrusaSlicer and SuperSlicer, near the end: `; filament used [mm] = 1491.16, 20.5`,
 *   `; filament used [cm3] = 3.59`, `; filament used [g] = 4.45`, `; total filament used [g] = 4.45`,
 *   `; total filament cost = 0.11`, and the config dump (`; filament_type = PLA`, `; filament_density = 1.24`);
 * - OrcaSlicer and Bambu Studio, in the header block: `; total filament length [mm] : 1234.56`,
 *   `; total filament volume [cm^3] : 2969.56`, `; total filament weight [g] : 3.70`,
 *   `; filament_density: 1.24`, and the same footer as PrusaSlicer;
 * - Cura, in its header: `;Filament used: 1.23456m` (metres, one value per extruder, no weight).
 *
 * Only the first and last `WINDOW_BYTES` of the file are read (slicers write these near either end), and a
 * line longer than `MAX_LINE` is skipped, so a hostile file costs bounded memory and time. A value that is
 * not a plain finite number within plausible bounds (negative, `1e300` grams) is ignored, never clamped.
 */

import { open } from 'node:fs/promises';

/** What the comments say; null where they say nothing usable. */
export interface FilamentFigures {
  grams: number | null;
  millimetres: number | null;
  cm3: number | null;
  /** The slicer's own cost figure, in the slicer profile's currency. */
  cost: number | null;
  /** g/cm³ of the (first) filament. */
  density: number | null;
  /** mm, of the (first) filament. */
  diameter: number | null;
  /** The (first) filament's material as the slicer names it, lower-cased (`pla`, `petg`). */
  material: string | null;
}

export const NO_FIGURES: FilamentFigures = {
  grams: null,
  millimetres: null,
  cm3: null,
  cost: null,
  density: null,
  diameter: null,
  material: null,
};

/** Bytes read from each end of the file. */
const WINDOW_BYTES = 512 * 1024;
/** Comment lines longer than this are not looked at (the longest real ones are config dump lists). */
const MAX_LINE = 8 * 1024;

/** Plausible upper bounds: 100 kg, 100 km, 100 litres, a million in any currency. */
const BOUNDS = { grams: 100_000, millimetres: 1e8, cm3: 100_000, cost: 1e6 } as const;

const KEYS = {
  grams: ['total filament used [g]', 'total filament weight [g]', 'filament used [g]'],
  millimetres: ['filament used [mm]', 'total filament length [mm]'],
  metres: ['filament used'],
  cm3: ['filament used [cm3]', 'total filament volume [cm^3]'],
  cost: ['total filament cost', 'filament cost'],
} as const;

/** Reads the comments near both ends of `path`. */
export async function readFilamentComments(path: string): Promise<FilamentFigures> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const values = new Map<string, string>();
    if (size <= 2 * WINDOW_BYTES) {
      const all = Buffer.alloc(size);
      await handle.read(all, 0, size, 0);
      collect(all, values, { cutStart: false, cutEnd: false });
    } else {
      const head = Buffer.alloc(WINDOW_BYTES);
      await handle.read(head, 0, WINDOW_BYTES, 0);
      collect(head, values, { cutStart: false, cutEnd: true });
      const tail = Buffer.alloc(WINDOW_BYTES);
      await handle.read(tail, 0, WINDOW_BYTES, size - WINDOW_BYTES);
      collect(tail, values, { cutStart: true, cutEnd: false });
    }
    return figuresOf(values);
  } finally {
    await handle.close();
  }
}

/**
 * Adds the `; key = value` / `; key: value` comments of `buffer` to `values` (first occurrence wins); a
 * line cut by the window's edge is skipped.
 */
function collect(
  buffer: Buffer,
  values: Map<string, string>,
  edges: { cutStart: boolean; cutEnd: boolean },
): void {
  let start = 0;
  if (edges.cutStart) {
    const first = buffer.indexOf(0x0a);
    if (first === -1) return;
    start = first + 1;
  }
  while (start < buffer.length) {
    let end = buffer.indexOf(0x0a, start);
    if (end === -1) {
      if (edges.cutEnd) return;
      end = buffer.length;
    }
    if (end - start <= MAX_LINE && buffer[start] === 0x3b /* ; */) {
      const match = /^;\s*([A-Za-z][^=:\r]*?)\s*[=:]\s*(.*?)\s*$/.exec(buffer.toString('utf8', start, end));
      if (match?.[1] !== undefined && match[2] !== undefined) {
        const key = match[1].toLowerCase();
        if (!values.has(key)) values.set(key, match[2]);
      }
    }
    start = end + 1;
  }
}

/** Turns the collected comment values into figures; implausible values are left out. */
export function figuresOf(values: ReadonlyMap<string, string>): FilamentFigures {
  const first = (keys: readonly string[], bound: number, unit = ''): number | null => {
    for (const key of keys) {
      const text = values.get(key);
      if (text === undefined) continue;
      const total = sumList(text, unit);
      if (total !== null && total <= bound) return total;
    }
    return null;
  };
  const metres = first(KEYS.metres, BOUNDS.millimetres / 1000, 'm');
  const density = firstOfList(values.get('filament_density'));
  const diameter = firstOfList(values.get('filament_diameter'));
  const material = values.get('filament_type')?.split(/[;,]/)[0]?.trim().toLowerCase() ?? '';
  return {
    grams: first(KEYS.grams, BOUNDS.grams),
    millimetres: first(KEYS.millimetres, BOUNDS.millimetres) ?? (metres === null ? null : metres * 1000),
    cm3: first(KEYS.cm3, BOUNDS.cm3),
    cost: first(KEYS.cost, BOUNDS.cost),
    density: density !== null && density >= 0.3 && density <= 5 ? density : null,
    diameter: diameter !== null && diameter >= 0.5 && diameter <= 5 ? diameter : null,
    material: /^[a-z0-9_+-]{1,32}$/.test(material) ? material : null,
  };
}

const PLAIN_NUMBER = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * `12.3, 4.5` (one value per extruder, each optionally followed by `unit`) → their sum; null when any
 * element is not a plain non-negative finite number (a minus sign is not a plain number).
 */
function sumList(text: string, unit: string): number | null {
  let total = 0;
  for (const raw of text.split(',')) {
    let part = raw.trim();
    if (unit && part.endsWith(unit)) part = part.slice(0, -unit.length).trim();
    if (!PLAIN_NUMBER.test(part)) return null;
    const value = Number(part);
    if (!Number.isFinite(value)) return null;
    total += value;
  }
  return Number.isFinite(total) ? total : null;
}

/** The first value of a `1.24;1.27` or `1.24,1.27` config list. */
function firstOfList(text: string | undefined): number | null {
  const part = text?.split(/[;,]/)[0]?.trim() ?? '';
  return PLAIN_NUMBER.test(part) ? Number(part) : null;
}
