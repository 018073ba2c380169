/** What the service knows about each `variant` before the printer has said anything. */

import type { Volume } from '../machine.js';
import type { UsbMachineConfig } from './config.js';

export interface VariantFacts {
  manufacturer: string | null;
  model: string | null;
  baud: number;
  volume: Volume | null;
}

const variants: Record<UsbMachineConfig['variant'], VariantFacts> = {
  Generic: { manufacturer: null, model: null, baud: 115_200, volume: null },
  // Original Prusa i3 MK3/MK3S: 250 × 210 × 210 mm, 115200 baud (the anchor's discover_variants.rs).
  PrusaMk3: {
    manufacturer: 'Prusa Research',
    model: 'MK3',
    baud: 115_200,
    volume: { width: 250, depth: 210, height: 210 },
  },
};

export function variantFacts(variant: UsbMachineConfig['variant']): VariantFacts {
  return variants[variant];
}
