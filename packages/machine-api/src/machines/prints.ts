/**
 * What a machine can print: the one rule that direct print (`POST /print`, the OctoPrint upload), queue
 * admission, queue routing and the dashboard (through `design_types` of `GET /machines`) all ask.
 *
 * - G-code goes to every machine: it is placed already, so no build volume applies.
 * - A mesh (STL, 3MF, OBJ) goes to a machine with a slicer, and to a simulated machine, which takes every
 *   design as it is (the anchor's Noop does) — queued or direct alike.
 * - A mesh must fit the machine's build volume, when that is known.
 */

import type { DesignKind } from '../design/inspect.js';
import type { Volume } from './machine.js';
import type { RegisteredMachine } from './registry.js';

/** What a design needs from a machine (a queued job keeps this as `parameters.design`). */
export interface DesignNeeds {
  kind: DesignKind;
  /** Width × depth × height in mm; null for G-code. */
  size: Volume | null;
}

/** What a machine can print. */
export interface MachinePrints {
  /** The design types it takes, G-code first. */
  designKinds: readonly DesignKind[];
  maxPartVolume: Volume | null;
}

/** Every design type, G-code first (the order `design_types` lists them in). */
export const DESIGN_KINDS: readonly DesignKind[] = ['gcode', 'stl', '3mf', 'obj'];
const GCODE_ONLY: readonly DesignKind[] = ['gcode'];

/** The design types a configured machine takes (see the module comment). */
export function designKindsOf(entry: RegisteredMachine): readonly DesignKind[] {
  return entry.common.slicer !== null || entry.machine.takesDesigns === true ? DESIGN_KINDS : GCODE_ONLY;
}

/** Why the machine cannot print the design, as words that follow the machine's name; null when it can. */
export function designRefusal(prints: MachinePrints, design: DesignNeeds): string | null {
  if (design.kind === 'gcode') return null;
  if (!prints.designKinds.includes(design.kind)) {
    return `has no slicer, so it prints G-code only (the design is ${describeKind(design.kind)})`;
  }
  if (design.size && prints.maxPartVolume && !fits(design.size, prints.maxPartVolume)) {
    return (
      `has a build volume of ${millimetres(prints.maxPartVolume)}, smaller than the design ` +
      `(${millimetres(design.size)}, width × depth × height)`
    );
  }
  return null;
}

function fits(size: Volume, volume: Volume): boolean {
  // Sub-micron slack: binary STL coordinates are float32, a 220 mm part may measure 220.00001.
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

function describeKind(kind: DesignKind): string {
  return { stl: 'an STL', '3mf': 'a 3MF', obj: 'an OBJ', gcode: 'G-code' }[kind];
}
