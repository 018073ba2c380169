/**
 * Finds the serial port of each configured USB printer and keeps looking: every scan enumerates the ports
 * (`serialport`'s list), hands each machine without a connection the first free port matching its
 * VID/PID/serial (an unset field matches anything), or its configured `port` path when it has one. A machine
 * whose printer was unplugged simply gets a port again on a later scan, once it is plugged back in.
 */

import { existsSync } from 'node:fs';
import type { Logger } from 'pino';
import { serialportLibrary } from './serialport-library.js';

/** One enumerated port, as far as matching needs it. */
export interface SerialPortInfo {
  path: string;
  vendorId: number | null;
  productId: number | null;
  serialNumber: string | null;
  manufacturer: string | null;
}

export type PortLister = () => Promise<SerialPortInfo[]>;

export interface PortCriteria {
  vendorId?: number;
  productId?: number;
  serial?: string;
}

/** A machine as discovery sees it. */
export interface DiscoverableMachine {
  readonly id: string;
  /** Configured device path; such a machine is never matched by VID/PID. */
  readonly fixedPort: string | null;
  readonly criteria: PortCriteria;
  /** The path of the port it holds (connected or connecting), null when it needs one. */
  heldPort(): string | null;
  /** Opens `port` and talks to the printer; resolves false when nothing usable answered. */
  connect(port: SerialPortInfo): Promise<boolean>;
  /** Called on every scan while connected (e.g. to check whether a halted printer answers again). */
  tick(): void;
}

/** Whether `port` is a USB device matching `criteria` (unset fields match anything). */
export function portMatches(criteria: PortCriteria, port: SerialPortInfo): boolean {
  if (port.vendorId === null) return false; // Not a USB device (e.g. a built-in ttyS*).
  if (criteria.vendorId !== undefined && criteria.vendorId !== port.vendorId) return false;
  if (criteria.productId !== undefined && criteria.productId !== port.productId) return false;
  if (criteria.serial !== undefined && criteria.serial !== port.serialNumber) return false;
  return true;
}

/** Ports as the `serialport` package enumerates them (udev on Linux). */
export const listSerialPorts: PortLister = async () =>
  (await (await serialportLibrary.get()).listSerialPorts()).map((port) => ({
    path: port.path,
    vendorId: parseHexId(port.vendorId),
    productId: parseHexId(port.productId),
    serialNumber: port.serialNumber ?? null,
    manufacturer: port.manufacturer ?? null,
  }));

function parseHexId(value: string | undefined): number | null {
  if (value === undefined || !/^[0-9a-f]{1,4}$/i.test(value)) return null;
  return Number.parseInt(value, 16);
}

export interface DiscoveryOptions {
  list: PortLister;
  intervalMs: number;
  logger: Logger;
}

export class PortDiscovery {
  private readonly members = new Set<DiscoverableMachine>();
  private timer: NodeJS.Timeout | null = null;
  private scanning: Promise<void> | null = null;
  private enumerationFailure: string | null = null;
  private readonly connecting = new Set<DiscoverableMachine>();

  constructor(private readonly options: DiscoveryOptions) {}

  /** Adds a machine; the first one starts the periodic scan. */
  join(machine: DiscoverableMachine): void {
    this.members.add(machine);
    if (!this.timer) {
      this.timer = setInterval(() => void this.scan(), this.options.intervalMs);
      void this.scan();
    }
  }

  /** Removes a machine; the last one stops scanning. */
  async leave(machine: DiscoverableMachine): Promise<void> {
    this.members.delete(machine);
    if (this.members.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
      await this.scanning;
    }
  }

  /** One pass: connect every machine that needs a port and has one available. Never throws. */
  scan(): Promise<void> {
    this.scanning ??= this.scanOnce().finally(() => {
      this.scanning = null;
    });
    return this.scanning;
  }

  private async scanOnce(): Promise<void> {
    const waiting: DiscoverableMachine[] = [];
    for (const machine of this.members) {
      if (this.connecting.has(machine)) continue;
      if (machine.heldPort() === null) waiting.push(machine);
      else machine.tick();
    }
    if (waiting.length === 0) return;
    const held = new Set(
      [...this.members].map((machine) => machine.heldPort()).filter((path) => path !== null),
    );
    const needsEnumeration = waiting.some((machine) => machine.fixedPort === null);
    const ports = needsEnumeration ? await this.enumerate() : [];
    const attempts: Promise<unknown>[] = [];
    for (const machine of waiting) {
      const port = machine.fixedPort
        ? this.fixedPort(machine.fixedPort, ports)
        : ports.find((candidate) => !held.has(candidate.path) && portMatches(machine.criteria, candidate));
      if (!port || held.has(port.path)) continue;
      held.add(port.path);
      this.connecting.add(machine);
      attempts.push(machine.connect(port).finally(() => this.connecting.delete(machine)));
    }
    await Promise.allSettled(attempts);
  }

  private fixedPort(path: string, ports: SerialPortInfo[]): SerialPortInfo | null {
    if (!existsSync(path)) return null; // Not plugged in (yet).
    return (
      ports.find((port) => port.path === path) ?? {
        path,
        vendorId: null,
        productId: null,
        serialNumber: null,
        manufacturer: null,
      }
    );
  }

  private async enumerate(): Promise<SerialPortInfo[]> {
    try {
      const ports = await this.options.list();
      if (this.enumerationFailure !== null) {
        this.options.logger.info('serial port enumeration works again');
        this.enumerationFailure = null;
      }
      return ports;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      // Without udev (containers) enumeration fails on every scan; say so once, not every 5 s.
      if (this.enumerationFailure !== message) {
        this.options.logger.warn(
          { err: message },
          'cannot enumerate serial ports; USB printers can still be bound with `port = "/dev/…"`',
        );
        this.enumerationFailure = message;
      }
      return [];
    }
  }
}
