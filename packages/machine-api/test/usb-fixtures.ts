/**
 * Shared pieces of the USB printer tests: a G-code file sliced by the real PrusaSlicer from a cube, the
 * commands a printer must receive for it, a Usb backend wired to a virtual printer, and condition polling.
 */

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pino, { type Logger } from 'pino';
import type { Machine } from '../src/machines/machine.js';
import { createUsbBackend } from '../src/machines/usb/backend.js';
import type { UsbMachineConfig } from '../src/machines/usb/config.js';
import type { ConnectionTimings } from '../src/machines/usb/marlin-connection.js';
import { stripComment } from '../src/machines/usb/marlin-protocol.js';
import type { SerialPortInfo } from '../src/machines/usb/port-discovery.js';
import type { MarlinSim } from './sim/marlin.js';

/** An ASCII STL of an axis-aligned cube with edge `size` mm, corner at the origin. */
export function cubeStl(size: number): string {
  const v = (x: number, y: number, z: number) => [x * size, y * size, z * size].join(' ');
  const quads: [number, number, number][][] = [
    [
      [0, 0, 0],
      [0, 1, 0],
      [1, 1, 0],
      [1, 0, 0],
    ],
    [
      [0, 0, 1],
      [1, 0, 1],
      [1, 1, 1],
      [0, 1, 1],
    ],
    [
      [0, 0, 0],
      [1, 0, 0],
      [1, 0, 1],
      [0, 0, 1],
    ],
    [
      [0, 1, 0],
      [0, 1, 1],
      [1, 1, 1],
      [1, 1, 0],
    ],
    [
      [0, 0, 0],
      [0, 0, 1],
      [0, 1, 1],
      [0, 1, 0],
    ],
    [
      [1, 0, 0],
      [1, 1, 0],
      [1, 1, 1],
      [1, 0, 1],
    ],
  ];
  const facets = quads.flatMap(([a, b, c, d]) => [
    [a, b, c],
    [a, c, d],
  ]);
  const body = facets
    .map(
      (tri) =>
        `facet normal 0 0 0\nouter loop\n${tri.map((p) => `vertex ${v(...p!)}`).join('\n')}\nendloop\nendfacet`,
    )
    .join('\n');
  return `solid cube\n${body}\nendsolid cube\n`;
}

/** Slices a cube with PrusaSlicer's built-in profile and returns the G-code path. */
export async function sliceCube(dir: string, size = 10): Promise<string> {
  const stl = join(dir, 'cube.stl');
  const gcode = join(dir, 'cube.gcode');
  await writeFile(stl, cubeStl(size));
  try {
    await promisify(execFile)('prusa-slicer', ['--loglevel', '1', '--export-gcode', '--output', gcode, stl]);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error('prusa-slicer is not installed; install it with: apt-get install -y prusa-slicer');
    }
    throw error;
  }
  return gcode;
}

/** The commands a printer must receive for `path`: comments and blank lines stripped, in file order. */
export async function expectedCommands(path: string): Promise<string[]> {
  return (await readFile(path, 'latin1'))
    .split('\n')
    .map(stripComment)
    .filter((line) => line !== '');
}

/** Polls `condition` until it holds; fails with `what` after a generous deadline. */
export async function waitFor<T>(
  what: string,
  condition: () => T | Promise<T>,
  timeoutMs = 60_000,
): Promise<NonNullable<Awaited<T>>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) return value as NonNullable<Awaited<T>>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** What udev would enumerate for the virtual printer: present only while the cable is plugged in. */
export function enumerating(
  sim: MarlinSim,
  device: Omit<SerialPortInfo, 'path'> = {
    vendorId: 0x2c99,
    productId: 0x0002,
    serialNumber: 'CZPX1234X004XC12345',
    manufacturer: 'Prusa Research (prusa3d.com)',
  },
) {
  return async (): Promise<SerialPortInfo[]> =>
    existsSync(sim.hostPath) ? [{ path: sim.hostPath, ...device }] : [];
}

export const silentLogger: Logger = pino({ level: 'silent' });

/** Creates Usb machines straight from the backend, with fast scans and short protocol timeouts. */
export function createMachines(
  entries: { id: string; config: UsbMachineConfig }[],
  listPorts: () => Promise<SerialPortInfo[]>,
  logger: Logger = silentLogger,
  timings: Partial<ConnectionTimings> = {},
): Machine[] {
  const backend = createUsbBackend({
    listPorts,
    scanIntervalMs: 100,
    timings: { handshakeTimeoutMs: 3_000, temperatureIntervalS: 1, ...timings },
  });
  return backend.create(entries, { logger, configDir: '/', dataDir: '/' });
}
