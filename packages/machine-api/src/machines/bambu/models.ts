/** What a Bambu serial number or `DevModel.bambu.com` code says about the printer. */

import type { Volume } from '../machine.js';

interface BambuModel {
  name: string;
  volume: Volume;
}

const CUBE_256: Volume = { width: 256, depth: 256, height: 256 };
const A1_MINI: Volume = { width: 180, depth: 180, height: 180 };

/** Serial-number prefixes (the anchor's table, §5.2). */
const BY_SERIAL_PREFIX: Record<string, BambuModel> = {
  '00M': { name: 'X1 Carbon', volume: CUBE_256 },
  '00W': { name: 'X1', volume: CUBE_256 },
  '03W': { name: 'X1E', volume: CUBE_256 },
  '01P': { name: 'P1S', volume: CUBE_256 },
  '01S': { name: 'P1P', volume: CUBE_256 },
  '039': { name: 'A1', volume: CUBE_256 },
  '030': { name: 'A1 mini', volume: A1_MINI },
};

/** Codes printers announce in `DevModel.bambu.com` (the same codes Bambu Studio's profiles use). */
const BY_DEV_MODEL: Record<string, BambuModel> = {
  'BL-P001': { name: 'X1 Carbon', volume: CUBE_256 },
  'BL-P002': { name: 'X1', volume: CUBE_256 },
  C13: { name: 'X1E', volume: CUBE_256 },
  C11: { name: 'P1P', volume: CUBE_256 },
  C12: { name: 'P1S', volume: CUBE_256 },
  N2S: { name: 'A1', volume: CUBE_256 },
  N1: { name: 'A1 mini', volume: A1_MINI },
};

/**
 * The model, from the announced model code when known, else from the serial prefix; null when neither is
 * recognised (a new model is better reported as unknown than as a wrong one).
 */
export function identifyModel(devModel: string | null, serial: string | null): BambuModel | null {
  if (devModel) {
    const byCode = BY_DEV_MODEL[devModel];
    if (byCode) return byCode;
  }
  if (serial) {
    const bySerial = BY_SERIAL_PREFIX[serial.slice(0, 3).toUpperCase()];
    if (bySerial) return bySerial;
  }
  return null;
}
