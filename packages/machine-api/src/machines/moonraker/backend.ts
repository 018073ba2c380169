/**
 * `type = "Moonraker"` in the TOML: a Klipper printer driven through Moonraker's HTTP + websocket API.
 *
 * ```toml
 * [machines.neptune]
 * type = "Moonraker"
 * endpoint = "http://192.168.1.102:7125"
 * variant = "ElegooNeptune4"          # or "Generic"
 * api_key = "…"                       # optional, sent as X-Api-Key
 * slicer = { type = "Prusa", config = "neptune4.ini" }
 * nozzle_diameter = 0.4
 * filaments = [{ material = { type = "pla" } }]
 * ```
 */

import type { MachineBackend } from '../backend.js';
import { DEFAULTS, type MoonrakerConfig, MoonrakerConfigSchema } from './config.js';
import { MoonrakerMachine } from './machine.js';

/** The printer's web host as Mainsail and Fluidd are usually served: the endpoint's host on the default port. */
function webHostOf(endpoint: string): string {
  const url = new URL(endpoint);
  return `${url.protocol}//${url.hostname}`;
}

export const moonrakerBackend: MachineBackend<MoonrakerConfig> = {
  type: 'Moonraker',
  schema: MoonrakerConfigSchema,
  create(entries, context) {
    return entries.map(({ id, config }) => {
      const timeoutMs = (config.timeout_seconds ?? DEFAULTS.timeout_seconds) * 1000;
      const pollIntervalMs = (config.poll_interval_seconds ?? DEFAULTS.poll_interval_seconds) * 1000;
      return new MoonrakerMachine(
        id,
        {
          endpoint: config.endpoint.replace(/\/+$/, ''),
          variant: config.variant,
          apiKey: config.api_key,
          timeoutMs,
          pollIntervalMs,
          reconnectDelayMs: pollIntervalMs,
          websocketRetryMs: 30_000,
          // Klipper keeps printing from its virtual SD card while Moonraker restarts: be patient.
          lostPrintGraceMs: (config.lost_print_grace_seconds ?? DEFAULTS.lost_print_grace_seconds) * 1000,
          cameraBaseUrl: config.camera_base_url ?? webHostOf(config.endpoint),
        },
        context.logger,
      );
    });
  },
};
