/** `type = "Bambu"`: Bambu Lab printers in LAN mode. One discovery listener per UDP port, shared by all of them. */

import type { MachineBackend } from '../backend.js';
import { type BambuConfig, BambuConfigSchema, settingsFrom } from './config.js';
import { DiscoveryListener } from './discovery.js';
import { BambuMachine } from './machine.js';

export const bambuBackend: MachineBackend<BambuConfig> = {
  type: 'Bambu',
  schema: BambuConfigSchema,
  create(entries, context) {
    const listeners = new Map<number, DiscoveryListener>();
    return entries.map(({ id, config }) => {
      const settings = settingsFrom(config);
      if (settings.host !== null && settings.serial === null) {
        throw new Error(
          `machines.${id}: \`host\` needs \`serial\` too (the printer's MQTT topics are named after its serial number)`,
        );
      }
      const logger = context.logger.child({ machine: id });
      let listener: DiscoveryListener | null = null;
      if (settings.host === null) {
        listener = listeners.get(settings.discoveryPort) ?? null;
        if (!listener) {
          listener = new DiscoveryListener(
            settings.discoveryPort,
            context.logger.child({ component: 'bambu-discovery' }),
          );
          listeners.set(settings.discoveryPort, listener);
        }
      }
      return new BambuMachine(id, settings, listener, logger);
    });
  },
};
