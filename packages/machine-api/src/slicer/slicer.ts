/**
 * Turning a design into machine instructions. The job runner calls a `Slicer`; PrusaSlicer is the real
 * implementation (prusa.ts). Design files are classified and measured in `src/design/` before slicing.
 */

import type { Volume } from '../machines/machine.js';

/** `slicer = { type = "Prusa", config = "<ini>" }` in the TOML, as in the anchor. */
export interface SlicerConfig {
  type: 'Prusa';
  /** Absolute path of the PrusaSlicer `.ini` profile. */
  config: string;
  /** Seconds one slicing run may take before the slicer is killed (default 600). */
  timeoutSeconds?: number;
}

export interface SliceRequest {
  /** Local path of the design (STL, 3MF or OBJ); its extension tells the slicer the format. */
  designPath: string;
  /** Where the G-code is written. */
  outputPath: string;
  /** Build volume used to centre the part when the profile has no bed shape. */
  buildVolume: Volume | null;
  /** Index of the filament/extruder to print with (`slicer_configuration.filament_idx`). */
  filamentIndex?: number;
  signal?: AbortSignal;
}

/** Estimates PrusaSlicer writes into the G-code trailer. */
export interface SliceEstimate {
  printTimeSeconds: number | null;
  filamentUsedMm: number | null;
  filamentUsedCm3: number | null;
  filamentUsedGrams: number | null;
}

export interface SliceResult {
  gcodePath: string;
  estimate: SliceEstimate;
}

/**
 * Slices one design. Throws `SlicingFailed` (with the slicer's own words) when the slicer fails or times
 * out, and the signal's reason when aborted.
 */
export interface Slicer {
  slice(request: SliceRequest): Promise<SliceResult>;
}
