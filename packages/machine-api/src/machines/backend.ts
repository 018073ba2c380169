/**
 * How a backend plugs into the service. Each backend folder (noop/, moonraker/, bambu/, usb/) exports
 * one `MachineBackend`; `registry.ts` picks it by the TOML `type` and hands it every `[machines.<id>]`
 * table of that type at once, so a backend can share one discovery task (UDP listener, port scan)
 * between its machines.
 */

import type { Logger } from 'pino';
import type { TSchema } from 'typebox';
import type { Machine } from './machine.js';

export interface BackendContext {
  logger: Logger;
  /** Directory of the config file: relative paths in the config are resolved against it. */
  configDir: string;
  /** The service's data directory (job files, caches). */
  dataDir: string;
}

export interface ConfiguredMachine<Config> {
  id: string;
  /** The backend-specific keys of `[machines.<id>]`, validated against `schema`. */
  config: Config;
}

export interface MachineBackend<Config = unknown> {
  /** The TOML `type` value, case-sensitive as in the anchor: `Noop`, `Moonraker`, `Bambu`, `Usb`. */
  readonly type: string;
  /**
   * TypeBox schema of the keys this backend reads. Keys common to every type (`type`, `slicer`,
   * `nozzle_diameter`, `filaments`, `loaded_filament_idx`, `max_part_volume`) are parsed by config.ts and
   * need not be repeated; unknown keys are ignored, as in the anchor.
   */
  readonly schema: TSchema;
  /** One `Machine` per configured entry, in the same order. Must not do I/O: `Machine.start()` does. */
  create(entries: ConfiguredMachine<Config>[], context: BackendContext): Machine[];
}
