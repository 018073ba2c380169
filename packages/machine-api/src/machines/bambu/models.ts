/** What a Bambu serial number or `DevModel.bambu.com` code says about the printer. */

import type { Volume } from '../machine.js';

interface BambuModel {
  name: string;
  volume: Volume;
  /** Its camera in LAN mode: JPEG over TLS on port 6000 (P1, A1) or RTSPS on port 322 (X1). */
  camera: 'jpeg' | 'rtsps';
}

const CUBE_256: Volume = { width: 256, depth: 256, height: 256 };
const A1_MINI: Volume = { width: 180, depth: 180, height: 180 };

/** Serial-number prefixes (the anchor's table, §5.2). */
const BY_SERIAL_PREFIX: Record<string, BambuModel> = {
  '00M': { name: 'X1 Carbon', volume: CUBE_256, camera: 'rtsps' },
  '00W': { name: 'X1', volume: CUBE_256, camera: 'rtsps' },
  '03W': { name: 'X1E', volume: CUBE_256, camera: 'rtsps' },
  '01P': { name: 'P1S', volume: CUBE_256, camera: 'jpeg' },
  '01S': { name: 'P1P', volume: CUBE_256, camera: 'jpeg' },
  '039': { name: 'A1', volume: CUBE_256, camera: 'jpeg' },
  '030': { name: 'A1 mini', volume: A1_MINI, camera: 'jpeg' },
};

/** Codes printers announce in `DevModel.bambu.com` (the same codes Bambu Studio's profiles use). */
const BY_DEV_MODEL: Record<string, BambuModel> = {
  'BL-P001': { name: 'X1 Carbon', volume: CUBE_256, camera: 'rtsps' },
  'BL-P002': { name: 'X1', volume: CUBE_256, camera: 'rtsps' },
  C13: { name: 'X1E', volume: CUBE_256, camera: 'rtsps' },
  C11: { name: 'P1P', volume: CUBE_256, camera: 'jpeg' },
  C12: { name: 'P1S', volume: CUBE_256, camera: 'jpeg' },
  N2S: { name: 'A1', volume: CUBE_256, camera: 'jpeg' },
  N1: { name: 'A1 mini', volume: A1_MINI, camera: 'jpeg' },
};

/**
 * The camera protocol of a printer: its model's when the model is known, else what its reports say (X1,
 * H2 and P2S firmware report `ipcam.rtsp_url`), else the P1/A1 JPEG stream.
 */
export function cameraProtocol(
  model: BambuModel | null,
  report: Record<string, unknown> | null,
): 'jpeg' | 'rtsps' {
  if (model) return model.camera;
  const ipcam = report?.ipcam as { rtsp_url?: unknown } | undefined;
  return typeof ipcam?.rtsp_url === 'string' && ipcam.rtsp_url.startsWith('rtsps://') ? 'rtsps' : 'jpeg';
}

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
