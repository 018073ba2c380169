/** The `Noop` backend: simulated machines configured entirely in the TOML file (see machine.ts). */

import type { MachineBackend } from '../backend.js';
import type { MachineState } from '../machine.js';
import { NoopKeys } from './config.js';
import { NoopMachine } from './machine.js';

/** The anchor's Noop build volume, used unless `max_part_volume` overrides it. */
const NOOP_VOLUME = { width: 500, depth: 600, height: 700 };

export const noopBackend: MachineBackend<NoopKeys> = {
  type: 'Noop',
  schema: NoopKeys,
  create(entries) {
    return entries.map(({ id, config }) => {
      const state: MachineState =
        config.state.state === 'failed'
          ? { state: 'failed', message: (config.state as { message?: string }).message ?? null }
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
        ...(config.filament_slots !== undefined ? { filamentSlots: config.filament_slots } : {}),
      });
    });
  },
};
