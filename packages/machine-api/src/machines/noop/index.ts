/** The `Noop` backend: simulated machines configured entirely in the TOML file (see noop-machine.ts). */

import { type Static, Type } from '@sinclair/typebox';
import type { MachineBackend } from '../backend.js';
import type { MachineState } from '../machine.js';
import { NoopMachine } from './noop-machine.js';

const StateName = Type.Union(
  (['unknown', 'idle', 'running', 'paused', 'complete', 'offline'] as const).map((s) => Type.Literal(s)),
);

const NoopKeys = Type.Object({
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
  /** Simulated latency of every status request, in milliseconds (a slow or unresponsive device). */
  status_delay_ms: Type.Integer({ minimum: 0, default: 0 }),
});
type NoopKeys = Static<typeof NoopKeys>;

/** The anchor's Noop build volume, used unless `max_part_volume` overrides it. */
const NOOP_VOLUME = { width: 500, depth: 600, height: 700 };

export const noopBackend: MachineBackend<NoopKeys> = {
  type: 'Noop',
  schema: NoopKeys,
  create(entries) {
    return entries.map(({ id, config }) => {
      const state: MachineState =
        config.state.state === 'failed'
          ? { state: 'failed', message: 'message' in config.state ? (config.state.message ?? null) : null }
          : { state: config.state.state };
      return new NoopMachine(id, {
        identity: {
          machineType: config.machine_type,
          makeModel: { manufacturer: config.manufacturer, model: config.model, serial: config.serial },
          maxPartVolume: NOOP_VOLUME,
        },
        state,
        progress: config.progress ?? null,
        printMilliseconds: config.print_seconds * 1000,
        printFormat: config.print_format,
        statusDelayMs: config.status_delay_ms,
      });
    });
  },
};
