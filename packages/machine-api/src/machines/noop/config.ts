/** The `[machines.<id>]` keys of `type = "Noop"`: everything a simulated machine reports comes from here. */

import { type Static, Type } from 'typebox';

const StateName = Type.Union([
  Type.Literal('unknown'),
  Type.Literal('idle'),
  Type.Literal('running'),
  Type.Literal('paused'),
  Type.Literal('complete'),
  Type.Literal('offline'),
]);

export const NoopKeys = Type.Object({
  /** `state.state = "idle"` or `state = { state = "failed", message = "jam" }`, as in the anchor. */
  state: Type.Union(
    [
      Type.Object({ state: StateName }),
      Type.Object({ state: Type.Literal('failed'), message: Type.Optional(Type.String()) }),
    ],
    { default: { state: 'idle' } },
  ),
  progress: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
  manufacturer: Type.String({ default: 'Zoo Corporation' }),
  model: Type.String({ default: 'Null Machine' }),
  serial: Type.String({ default: 'Cheerios' }),
  machine_type: Type.Union(
    [Type.Literal('FusedDeposition'), Type.Literal('Stereolithography'), Type.Literal('Cnc')],
    { default: 'FusedDeposition' },
  ),
  /** How long a simulated print takes, in seconds. */
  print_seconds: Type.Number({ minimum: 0, default: 10 }),
  /** The file format the simulated machine takes (`gcode.3mf` simulates a Bambu-like machine). */
  print_format: Type.Union([Type.Literal('gcode'), Type.Literal('gcode.3mf')], { default: 'gcode' }),
  /** Filament slots a spool can be assigned to one by one (a simulated AMS); absent: one spool. */
  filament_slots: Type.Optional(Type.Integer({ minimum: 1, maximum: 16 })),
  /** Simulated latency of every status request, in milliseconds (a slow or unresponsive device). */
  status_delay_ms: Type.Integer({ minimum: 0, default: 0 }),
});
export type NoopKeys = Static<typeof NoopKeys>;
