import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Machine, MachineError, type PrintRequest } from '../src/machines/machine.js';
import type { ConnectionTimings } from '../src/machines/usb/marlin-connection.js';
import { SAFE_END_GCODE } from '../src/machines/usb/print-stream.js';
import { MarlinSim, type MarlinSimOptions } from './sim/marlin.js';
import {
  createMachines,
  enumerating,
  expectedCommands,
  silentLogger,
  sliceCube,
  waitFor,
} from './usb-fixtures.js';

let dir: string;
// A 5 mm cube (~750 commands) for most tests, a 10 mm one (~2600) for the full print.
let gcodePath: string;
let expected: string[];
let largeGcodePath: string;
let largeExpected: string[];
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'usb-machine-'));
  gcodePath = await sliceCube(await mkdtemp(join(dir, 'small-')), 5);
  expected = await expectedCommands(gcodePath);
  largeGcodePath = await sliceCube(await mkdtemp(join(dir, 'large-')), 10);
  largeExpected = await expectedCommands(largeGcodePath);
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A virtual printer and a Usb machine discovered on it (VID/PID of a Prusa MK3), connected and idle. */
async function connectedPrinter(options: MarlinSimOptions = {}, timings: Partial<ConnectionTimings> = {}) {
  const sim = await MarlinSim.start(options);
  cleanups.push(() => sim.close());
  const [machine] = createMachines(
    [{ id: 'mk3', config: { variant: 'PrusaMk3', vendor_id: 0x2c99, product_id: 0x0002 } }],
    enumerating(sim),
    silentLogger,
    timings,
  );
  await machine!.start();
  cleanups.push(() => machine!.close());
  await waitFor('the printer to be idle', async () => (await machine!.status()).state.state === 'idle');
  return { sim, machine: machine! };
}

function printRequest(jobId = 'job-1', filePath = gcodePath): PrintRequest {
  return { jobId, jobName: 'cube', filePath, signal: new AbortController().signal };
}

/** The commands the printer accepted since `from`. */
function printedSince(sim: MarlinSim, from: number): string[] {
  return sim.commands.slice(from);
}

async function stateOf(machine: Machine): Promise<string> {
  return (await machine.status()).state.state;
}

// Generous: the suites of both services share two cores, and a streamed print is thousands of round trips.
describe('USB Marlin printer on a virtual serial port', { timeout: 120_000 }, () => {
  it('identifies the printer from M115 and reports the USB port, baud, firmware and temperatures', async () => {
    const { sim, machine } = await connectedPrinter();
    expect(machine.identity()).toEqual({
      machineType: 'FusedDeposition',
      makeModel: {
        manufacturer: 'Prusa Research',
        model: 'Virtual Ender',
        serial: 'cede2a2f-41a2-4748-9b12-c55c62f367ff',
      },
      maxPartVolume: { width: 250, depth: 210, height: 210 },
    });
    // The handshake: line numbers reset, capabilities asked, temperatures auto-reported every second.
    expect(sim.commands.slice(0, 3)).toEqual(['M110 N0', 'M115', 'M155 S1']);
    expect(sim.rawLines[0]).toBe('N0 M110 N0*125');
    const status = await waitFor('a temperature report', async () => {
      const current = await machine.status();
      return current.temperatures['bed'] ? current : null;
    });
    expect(status.state).toEqual({ state: 'idle' });
    expect(status.progress).toBeNull();
    expect(status.temperatures).toEqual({
      extruder: { current: 21.5, target: 0 },
      bed: { current: 20.8, target: 0 },
    });
    expect(status.extra).toEqual({
      Usb: {
        port: sim.hostPath,
        baud: 115200,
        variant: 'PrusaMk3',
        firmware_name: 'Marlin 2.1.2.1 (Jul 12 2023 12:00:00)',
        protocol_version: '1.0',
        machine_type: 'Virtual Ender',
        uuid: 'cede2a2f-41a2-4748-9b12-c55c62f367ff',
        vendor_id: 0x2c99,
        product_id: 0x0002,
        capabilities: { AUTOREPORT_TEMP: true, EEPROM: true, HOST_ACTION_COMMANDS: true },
      },
    });
  });

  it('streams a sliced cube intact and in order, reports progress and refuses a second print', async () => {
    const { sim, machine } = await connectedPrinter({ busyEvery: 50 });
    const from = sim.commands.length;
    const halfway = Math.floor(largeExpected.length / 2);
    sim.holdAtCommand(from + halfway);
    const active = await machine.print(printRequest('job-1', largeGcodePath));
    await waitFor('the printer to hold an ok halfway', () => sim.holding);
    const running = await machine.status();
    expect(running.state).toEqual({ state: 'running' });
    expect(running.progress).toBeGreaterThan(0);
    expect(running.progress).toBeLessThan(100);
    const second = machine.print(printRequest('job-2'));
    await expect(second).rejects.toBeInstanceOf(MachineError);
    await expect(second).rejects.toMatchObject({ code: 'MachineBusy' });
    sim.release();
    expect(await active.finished).toEqual({ status: 'completed' });
    expect(printedSince(sim, from)).toEqual(largeExpected);
    expect(sim.resendRequests).toEqual([]);
    expect(await machine.status()).toMatchObject({ state: { state: 'idle' }, progress: null });
  });

  it('recovers from corrupted lines by resending from the line the firmware asks for', async () => {
    const { sim, machine } = await connectedPrinter();
    const from = sim.commands.length;
    // Lines 1-3 were the handshake; corrupt the 10th and the 400th line of the print on the wire.
    sim.corruptLine(from + 10);
    sim.corruptLine(from + 400);
    const active = await machine.print(printRequest());
    expect(await active.finished).toEqual({ status: 'completed' });
    expect(sim.resendRequests).toEqual([from + 10, from + 400]);
    expect(printedSince(sim, from)).toEqual(expected);
  });

  it('fails the job with the firmware’s Error: message, stays failed until the printer answers again', async () => {
    const { sim, machine } = await connectedPrinter();
    const from = sim.commands.length;
    sim.failAtCommand(from + 100, 'Thermal Runaway, system stopped! Heater_ID: 0');
    const active = await machine.print(printRequest());
    expect(await active.finished).toEqual({
      status: 'failed',
      message: 'Thermal Runaway, system stopped! Heater_ID: 0',
    });
    expect(printedSince(sim, from)).toEqual(expected.slice(0, 100));
    expect((await machine.status()).state).toEqual({
      state: 'failed',
      message: 'Thermal Runaway, system stopped! Heater_ID: 0',
    });
    await expect(machine.print(printRequest('job-2'))).rejects.toMatchObject({ code: 'MachineRejected' });
    sim.reset(); // The reset button.
    await waitFor('the printer to be idle after the reset', async () => (await stateOf(machine)) === 'idle');
    const again = await machine.print(printRequest('job-3'));
    expect(await again.finished).toEqual({ status: 'completed' });
  });

  it('prods a silent printer with M105 when an ok is lost, and carries on', async () => {
    // Wall-clock timeouts here only decide when the prod is sent; the assertions do not depend on speed.
    const { sim, machine } = await connectedPrinter({}, { responseTimeoutMs: 1_000 });
    const from = sim.commands.length;
    sim.loseOkOf(from + 20);
    const active = await machine.print(printRequest());
    expect(await active.finished).toEqual({ status: 'completed' });
    // A loaded machine may draw an extra prod elsewhere; the one that matters follows the 20th command.
    expect(expected).not.toContain('M105');
    const printed = printedSince(sim, from);
    expect(printed.slice(20)).toContain('M105');
    expect(printed.filter((command) => command !== 'M105')).toEqual(expected);
  });

  it('goes offline when unplugged mid-print and comes back when plugged in again', async () => {
    const { sim, machine } = await connectedPrinter();
    const from = sim.commands.length;
    sim.holdAtCommand(from + 200);
    const active = await machine.print(printRequest());
    await waitFor('the printer to hold an ok', () => sim.holding);
    await sim.unplug();
    expect(await active.finished).toEqual({ status: 'failed', message: 'the printer was disconnected' });
    expect(await machine.status()).toMatchObject({
      state: { state: 'offline' },
      progress: null,
      temperatures: {},
    });
    await expect(machine.print(printRequest('job-2'))).rejects.toMatchObject({ code: 'MachineOffline' });
    await sim.plugIn();
    await waitFor('the printer to be back', async () => (await stateOf(machine)) === 'idle');
    const resumedFrom = sim.commands.length;
    const again = await machine.print(printRequest('job-3'));
    expect(await again.finished).toEqual({ status: 'completed' });
    expect(printedSince(sim, resumedFrom)).toEqual(expected);
  });

  it('pauses after the line in flight and resumes where it stopped', async () => {
    const { sim, machine } = await connectedPrinter();
    const from = sim.commands.length;
    sim.holdAtCommand(from + 300);
    const active = await machine.print(printRequest());
    await waitFor('the printer to hold an ok', () => sim.holding);
    await machine.pause();
    const before = await machine.status();
    expect(before.state).toEqual({ state: 'paused' });
    sim.release();
    // Once the line in flight is acknowledged, nothing more is sent.
    await waitFor(
      'the held line to be acknowledged',
      async () => (await machine.status()).progress! > before.progress!,
    );
    expect(sim.commands.length).toBe(from + 300);
    expect(await machine.status()).toMatchObject({ state: { state: 'paused' } });
    await machine.resume();
    expect(await active.finished).toEqual({ status: 'completed' });
    expect(printedSince(sim, from)).toEqual(expected);
  });

  it('cancels: stops streaming, then turns heaters and motors off', async () => {
    const { sim, machine } = await connectedPrinter();
    const from = sim.commands.length;
    sim.holdAtCommand(from + 300);
    const active = await machine.print(printRequest());
    await waitFor('the printer to hold an ok', () => sim.holding);
    const stopped = machine.stop();
    sim.release();
    await stopped;
    expect(await active.finished).toEqual({ status: 'cancelled' });
    expect(printedSince(sim, from)).toEqual([...expected.slice(0, 300), ...SAFE_END_GCODE]);
    expect(SAFE_END_GCODE).toEqual(['M104 S0', 'M140 S0', 'M107', 'M84']);
    expect(await stateOf(machine)).toBe('idle');
  });

  it('follows the firmware’s //action:pause and //action:resume', async () => {
    const { sim, machine } = await connectedPrinter();
    const from = sim.commands.length;
    sim.holdAtCommand(from + 50);
    const active = await machine.print(printRequest());
    await waitFor('the printer to hold an ok', () => sim.holding);
    sim.emit('//action:pause');
    await waitFor('the machine to pause', async () => (await stateOf(machine)) === 'paused');
    sim.release();
    sim.emit('//action:resume');
    expect(await active.finished).toEqual({ status: 'completed' });
    expect(printedSince(sim, from)).toEqual(expected);
  });

  it('polls temperatures with M105 when the firmware cannot auto-report them', async () => {
    const { sim, machine } = await connectedPrinter({ autoReportTemp: false, advancedOk: false });
    expect(sim.commands.slice(0, 2)).toEqual(['M110 N0', 'M115']);
    const temperatures = await waitFor('temperatures from an M105 poll', async () => {
      const { temperatures } = await machine.status();
      return temperatures['bed'] ? temperatures : null;
    });
    expect(temperatures).toEqual({
      extruder: { current: 21.5, target: 0 },
      bed: { current: 20.8, target: 0 },
    });
    expect(sim.commands).toContain('M105');
    expect(sim.commands).not.toContain('M155 S1');
  });

  it('binds a machine to its configured port without enumeration, and logs failing enumeration once', async () => {
    const sim = await MarlinSim.start();
    cleanups.push(() => sim.close());
    const logLines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => logLines.push(line) });
    let enumerations = 0;
    const withoutUdev = async () => {
      enumerations++;
      throw new Error('spawn udevadm ENOENT');
    };
    const [direct, byId] = createMachines(
      [
        { id: 'direct', config: { variant: 'Generic', port: sim.hostPath, baud: 250000 } },
        { id: 'by-id', config: { variant: 'Generic', vendor_id: 0x2c99 } },
      ],
      withoutUdev,
      logger,
    );
    for (const machine of [direct!, byId!]) {
      await machine.start();
      cleanups.push(() => machine.close());
    }
    await waitFor('the bound printer to be idle', async () => (await stateOf(direct!)) === 'idle');
    await waitFor('several scans', () => enumerations >= 3);
    expect(await stateOf(byId!)).toBe('offline');
    expect((await byId!.status()).extra).toMatchObject({ Usb: { port: null, firmware_name: null } });
    expect((await direct!.status()).extra).toMatchObject({
      Usb: { port: sim.hostPath, baud: 250000, vendor_id: null, product_id: null },
    });
    expect(direct!.identity().makeModel).toEqual({
      manufacturer: null,
      model: 'Virtual Ender',
      serial: 'cede2a2f-41a2-4748-9b12-c55c62f367ff',
    });
    const warnings = logLines.filter((line) => line.includes('cannot enumerate serial ports'));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ err: 'spawn udevadm ENOENT' });
  });
});
