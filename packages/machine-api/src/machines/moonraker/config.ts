/** The `[machines.<id>]` keys of `type = "Moonraker"`. */

import { type Static, Type } from 'typebox';

/** Defaults of the optional timing keys (seconds). */
export const DEFAULTS = {
  timeout_seconds: 5,
  poll_interval_seconds: 2,
  lost_print_grace_seconds: 300,
} as const;

export const MoonrakerConfigSchema = Type.Object({
  endpoint: Type.String({
    pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*)?$',
    description: 'Base URL of Moonraker, e.g. http://192.168.1.102:7125 (no query, no fragment)',
  }),
  variant: Type.Union([Type.Literal('Generic'), Type.Literal('ElegooNeptune4')]),
  camera_base_url: Type.Optional(
    Type.String({
      pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*)?$',
      description:
        "Where the printer's web interface is served, which relative webcam URLs resolve against (default: the endpoint's host on port 80)",
    }),
  ),
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
