/**
 * `type = "Usb"`: Marlin printers on USB serial ports. All USB machines of a config share one port
 * discovery, so two printers never grab the same port.
 */

import { resolve } from 'node:path';
import type { MachineBackend } from '../backend.js';
import { type UsbMachineConfig, UsbMachineConfigSchema } from './config.js';
import { UsbMachine } from './machine.js';
import { type ConnectionTimings, defaultTimings } from './marlin-connection.js';
import { listSerialPorts, PortDiscovery, type PortLister } from './port-discovery.js';

export interface UsbBackendOptions {
  /** Port enumeration; `serialport`'s list by default. */
  listPorts?: PortLister;
  /** Time between two discovery scans (the anchor scans every 5 s). */
  scanIntervalMs?: number;
  timings?: Partial<ConnectionTimings>;
}

/** The Usb backend with its discovery and protocol timings. */
export function createUsbBackend(options: UsbBackendOptions = {}): MachineBackend<UsbMachineConfig> {
  return {
    type: 'Usb',
    schema: UsbMachineConfigSchema,
    create(entries, context) {
      const logger = context.logger.child({ backend: 'usb' });
      const discovery = new PortDiscovery({
        list: options.listPorts ?? listSerialPorts,
        intervalMs: options.scanIntervalMs ?? 5_000,
        logger,
      });
      const timings = { ...defaultTimings, ...options.timings };
      return entries.map(
        ({ id, config }) =>
          new UsbMachine({
            id,
            config,
            fixedPort: config.port === undefined ? null : resolve(context.configDir, config.port),
            discovery,
            timings,
            logger,
          }),
      );
    },
  };
}

export const usbBackend = createUsbBackend();
