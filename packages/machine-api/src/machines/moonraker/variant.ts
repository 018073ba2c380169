/** What the configured `variant` tells about the printer, as in the anchor's `MoonrakerVariant`. */

import type { MachineMakeModel, Volume } from '../machine.js';

export type MoonrakerVariant = 'Generic' | 'ElegooNeptune4';

export interface VariantFacts {
  makeModel: MachineMakeModel;
  /** Null when only the slicer profile (or the `max_part_volume` override) can tell. */
  volume: Volume | null;
}

export function variantFacts(variant: MoonrakerVariant): VariantFacts {
  switch (variant) {
    case 'ElegooNeptune4':
      // Elegoo's published build volume of the Neptune 4 (225 × 225 × 265 mm); the anchor's 250³ is
      // larger than the bed, and the reported volume must be an upper bound the printer can reach.
      return {
        makeModel: { manufacturer: 'Elegoo', model: 'Neptune 4', serial: null },
        volume: { width: 225, depth: 225, height: 265 },
      };
    case 'Generic':
      return { makeModel: { manufacturer: null, model: null, serial: null }, volume: null };
  }
}
