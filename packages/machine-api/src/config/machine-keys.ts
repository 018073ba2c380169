/**
 * The keys every `[machines.<id>]` table may carry whatever its type (the anchor's shared sub-types plus
 * ours), and their checked form with paths made absolute.
 */

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Static, Type } from 'typebox';
import { FILAMENT_MATERIALS, type Volume } from '../machines/machine.js';
import type { SlicerConfig } from '../slicer/slicer.js';
import { ConfigError } from './check.js';

/**
 * How a finished print's bed becomes clear again:
 * - `manual`: a person confirms with `POST /machines/{id}/clear`;
 * - `gcode`: the machine's `eject_gcode` ends every job, so a completed job leaves the bed clear (a failed
 *   or cancelled one still waits for a person);
 * - `external`: a sensor or automation confirms with a `clear`-scoped key, within `clear_timeout_minutes`;
 * - `auto`: the printer clears itself after a completed or cancelled print (the old `auto_clear = true`).
 */
export const CLEARING_MODES = ['manual', 'gcode', 'external', 'auto'] as const;
export type ClearingMode = (typeof CLEARING_MODES)[number];

export interface ClearingConfig {
  mode: ClearingMode;
  /** The snippet appended to every job (`gcode` mode only), else null. */
  ejectGcode: string | null;
  /** Minutes before `machine.awaiting_clear` for this machine; null for the server's `awaiting_clear_minutes`. */
  clearTimeoutMinutes: number | null;
}

const PositiveMillimetres = Type.Number({ exclusiveMinimum: 0 });

/** Keys every machine may carry, whatever its type (the anchor's shared sub-types plus our volume override). */
export const CommonKeys = Type.Object({
  type: Type.String(),
  slicer: Type.Optional(
    Type.Object({
      type: Type.Literal('Prusa'),
      config: Type.String({ minLength: 1 }),
      /** Seconds one slicing run may take before the slicer is killed (default 600). */
      timeout_seconds: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
    }),
  ),
  nozzle_diameter: Type.Optional(PositiveMillimetres),
  filaments: Type.Optional(
    Type.Array(
      Type.Object({
        material: Type.Object({ type: Type.Union(FILAMENT_MATERIALS.map((m) => Type.Literal(m))) }),
        name: Type.Optional(Type.String()),
        color: Type.Optional(Type.String({ pattern: '^[0-9A-Fa-f]{6}$' })),
        /** g/cm³, to turn a length into a weight (default: the material's typical density). */
        density: Type.Optional(Type.Number({ minimum: 0.3, maximum: 5 })),
        /** mm (default 1.75). */
        diameter: Type.Optional(Type.Number({ minimum: 0.5, maximum: 5 })),
        /** Price of a kilogram in `[filament] currency`, for the cost of jobs printed without a Spoolman spool. */
        price_per_kg: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000 })),
      }),
    ),
  ),
  loaded_filament_idx: Type.Optional(Type.Integer({ minimum: 0 })),
  max_part_volume: Type.Optional(
    Type.Object({ width: PositiveMillimetres, depth: PositiveMillimetres, height: PositiveMillimetres }),
  ),
  /**
   * The printer clears its own bed (a belt printer, a part ejector): after a completed or cancelled print
   * it is ready again without `POST /machines/{id}/clear`.
   */
  auto_clear: Type.Optional(Type.Boolean()),
  /** How the bed becomes clear after a print (see `ClearingConfig`); `auto_clear = true` means "auto". */
  clearing: Type.Optional(Type.Union(CLEARING_MODES.map((mode) => Type.Literal(mode)))),
  /** `clearing = "gcode"`: appended to every job sent to the machine (a part ejector, a belt advance). */
  eject_gcode: Type.Optional(Type.String({ minLength: 1, maxLength: 65_536 })),
  /** `clearing = "external"`: minutes after which an unconfirmed bed raises `machine.awaiting_clear`. */
  clear_timeout_minutes: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
  /** A camera reached over HTTP (cameras/http-source.ts); takes precedence over the device's own camera. */
  camera: Type.Optional(
    Type.Object({
      snapshot_url: Type.Optional(Type.String({ pattern: '^https?://\\S+$' })),
      stream_url: Type.Optional(Type.String({ pattern: '^https?://\\S+$' })),
      username: Type.Optional(Type.String()),
      password: Type.Optional(Type.String()),
      timeout_ms: Type.Optional(Type.Integer({ minimum: 1 })),
    }),
  ),
  /** Names for groups of machines, e.g. `["bambu", "basement"]`; notification filters may name them. */
  tags: Type.Optional(Type.Array(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$', maxLength: 64 }))),
  /** Highest hot-end target the service sends this machine, in °C (default 300). */
  max_tool_temp: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 500 })),
  /** Highest bed target the service sends this machine, in °C (default 120). */
  max_bed_temp: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 500 })),
});
export const COMMON_KEY_NAMES = Object.keys(CommonKeys.properties);

export interface Filament {
  material: { type: string };
  name?: string;
  color?: string;
  density?: number;
  diameter?: number;
  price_per_kg?: number;
}

/** The keys shared by every machine type, checked and with paths made absolute. */
export interface CommonMachineConfig {
  slicer: SlicerConfig | null;
  nozzleDiameter: number | null;
  filaments: Filament[];
  loadedFilamentIdx: number | null;
  maxPartVolume: Volume | null;
  /** How the bed becomes clear after a print (`clearing`, `eject_gcode`, `clear_timeout_minutes`). */
  clearing: ClearingConfig;
  /** The machine's HTTP camera (`camera = {…}`), or null for the device's own (if it has one). */
  camera: CameraConfig | null;
  /** Group names of the machine (notification filters). */
  tags: string[];
  /** Highest temperature targets the service sends, in °C. */
  maxToolTemp: number;
  maxBedTemp: number;
}

/** The limits of a machine that does not set `max_tool_temp` / `max_bed_temp`. */
export const DEFAULT_MAX_TOOL_TEMP = 300;
export const DEFAULT_MAX_BED_TEMP = 120;

export interface CameraConfig {
  snapshotUrl: string | null;
  streamUrl: string | null;
  username?: string;
  password?: string;
  timeoutMs: number | null;
}

export function commonConfig(
  keys: Static<typeof CommonKeys>,
  where: string,
  configDir: string,
): CommonMachineConfig {
  const filaments = keys.filaments ?? [];
  const loaded = keys.loaded_filament_idx ?? null;
  if (loaded !== null && loaded >= filaments.length) {
    throw new ConfigError(
      `${where}: key "loaded_filament_idx": expected an index below the number of filaments (${filaments.length}), got ${loaded}`,
    );
  }
  let slicer: SlicerConfig | null = null;
  if (keys.slicer) {
    const ini = resolve(configDir, keys.slicer.config);
    if (!existsSync(ini)) {
      throw new ConfigError(
        `${where}: key "slicer.config": expected an existing PrusaSlicer .ini file, ${ini} does not exist`,
      );
    }
    slicer = { type: 'Prusa', config: ini };
    if (keys.slicer.timeout_seconds !== undefined) slicer.timeoutSeconds = keys.slicer.timeout_seconds;
  }
  return {
    slicer,
    nozzleDiameter: keys.nozzle_diameter ?? null,
    filaments,
    loadedFilamentIdx: loaded,
    maxPartVolume: keys.max_part_volume ?? null,
    clearing: clearingConfig(keys, where),
    camera: cameraConfig(keys.camera, where),
    tags: keys.tags ?? [],
    maxToolTemp: keys.max_tool_temp ?? DEFAULT_MAX_TOOL_TEMP,
    maxBedTemp: keys.max_bed_temp ?? DEFAULT_MAX_BED_TEMP,
  };
}

function clearingConfig(keys: Static<typeof CommonKeys>, where: string): ClearingConfig {
  if (keys.auto_clear !== undefined && keys.clearing !== undefined) {
    throw new ConfigError(
      `${where}: keys "auto_clear" and "clearing" are both set: keep only "clearing" ("auto_clear = true" is the old spelling of clearing = "auto")`,
    );
  }
  const mode: ClearingMode =
    (keys.clearing as ClearingMode | undefined) ?? (keys.auto_clear ? 'auto' : 'manual');
  if (mode === 'gcode' && keys.eject_gcode === undefined) {
    throw new ConfigError(
      `${where}: key "eject_gcode": expected the G-code that clears the bed, since clearing = "gcode"; it is missing`,
    );
  }
  if (mode !== 'gcode' && keys.eject_gcode !== undefined) {
    throw new ConfigError(
      `${where}: key "eject_gcode": only used with clearing = "gcode", but clearing is "${mode}"`,
    );
  }
  if (mode !== 'external' && keys.clear_timeout_minutes !== undefined) {
    throw new ConfigError(
      `${where}: key "clear_timeout_minutes": only used with clearing = "external", but clearing is "${mode}" ([server] awaiting_clear_minutes applies)`,
    );
  }
  return {
    mode,
    ejectGcode: mode === 'gcode' ? (keys.eject_gcode ?? null) : null,
    clearTimeoutMinutes: keys.clear_timeout_minutes ?? null,
  };
}

function cameraConfig(keys: Static<typeof CommonKeys>['camera'], where: string): CameraConfig | null {
  if (!keys) return null;
  if (!keys.snapshot_url && !keys.stream_url) {
    throw new ConfigError(`${where}: key "camera": expected "snapshot_url", "stream_url" or both`);
  }
  return {
    snapshotUrl: keys.snapshot_url ?? null,
    streamUrl: keys.stream_url ?? null,
    ...(keys.username !== undefined ? { username: keys.username } : {}),
    ...(keys.password !== undefined ? { password: keys.password } : {}),
    timeoutMs: keys.timeout_ms ?? null,
  };
}
