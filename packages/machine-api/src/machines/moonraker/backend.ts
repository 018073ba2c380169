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

import { type Static, Type } from '@sinclair/typebox';
import type { MachineBackend } from '../backend.js';
import { MoonrakerMachine } from './machine.js';

/** Defaults of the optional timing keys (seconds). */
const DEFAULTS = { timeout_seconds: 5, poll_interval_seconds: 2, lost_print_grace_seconds: 300 } as const;

export const MoonrakerConfigSchema = Type.Object({
  endpoint: Type.String({
    pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*)?$',
    description: 'Base URL of Moonraker, e.g. http://192.168.1.102:7125 (no query, no fragment)',
  }),
  variant: Type.Union([Type.Literal('Generic'), Type.Literal('ElegooNeptune4')]),
  api_key: Type.Optional(Type.String({ minLength: 1, description: 'Moonraker API key, sent as X-Api-Key' })),
  timeout_seconds: Type.Optional(
    Type.Number({
      exclusiveMinimum: 0,
      default: DEFAULTS.timeout_seconds,
      description: 'Deadline of each request; a Moonraker not answering within it is offline',
    }),
  ),
  poll_interval_seconds: Type.Optional(
    Type.Number({
      exclusiveMinimum: 0,
      default: DEFAULTS.poll_interval_seconds,
      description: 'Interval of HTTP polling (when the websocket is unavailable) and of websocket pings',
    }),
  ),
  lost_print_grace_seconds: Type.Optional(
    Type.Number({
      minimum: 0,
      default: DEFAULTS.lost_print_grace_seconds,
      description: 'How long Moonraker may be unreachable during a print before the job fails',
    }),
  ),
});

export type MoonrakerConfig = Static<typeof MoonrakerConfigSchema>;

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
        },
        context.logger,
      );
    });
  },
};
