/** The Moonraker → service mappings: machine state (reference §6 plus the end-state rule), progress, names. */

import { describe, expect, it } from 'vitest';
import { remoteFileName } from '../src/machines/moonraker/file-name.js';
import { machineStateOf, progressOf, temperaturesOf } from '../src/machines/moonraker/status.js';

const stats = (state: string, message = '') => ({ state, filename: 'part.gcode', message });

describe('machineStateOf', () => {
  it.each([
    ['standby', { state: 'idle' }],
    ['printing', { state: 'running' }],
    ['paused', { state: 'paused' }],
    ['complete', { state: 'complete' }],
    ['cancelled', { state: 'complete' }],
    ['something_new', { state: 'unknown' }],
  ])('maps print_stats.state %s of a ready Klipper', (printState, expected) => {
    expect(machineStateOf('ready', 'Printer is ready', stats(printState))).toEqual(expected);
  });

  it('maps error to failed with print_stats.message', () => {
    expect(machineStateOf('ready', '', stats('error', 'Move out of range'))).toEqual({
      state: 'failed',
      message: 'Move out of range',
    });
    expect(machineStateOf('ready', '', stats('error'))).toEqual({ state: 'failed', message: null });
  });

  it('keeps a finished print complete until the bed is confirmed clear (SDCARD_RESET_FILE → standby)', () => {
    expect(machineStateOf('ready', '', stats('complete'))).toEqual({ state: 'complete' });
    expect(machineStateOf('ready', '', stats('cancelled'))).toEqual({ state: 'complete' });
    expect(machineStateOf('ready', '', stats('standby'))).toEqual({ state: 'idle' });
  });

  it("reports Klippy's own state when it is not ready", () => {
    expect(machineStateOf('disconnected', '', stats('printing'))).toEqual({ state: 'offline' });
    expect(machineStateOf('startup', '', null)).toEqual({ state: 'unknown' });
    expect(machineStateOf('shutdown', 'MCU shutdown', stats('printing'))).toEqual({
      state: 'failed',
      message: 'MCU shutdown',
    });
    expect(machineStateOf('error', '', null)).toEqual({
      state: 'failed',
      message: 'Klipper is in the error state',
    });
  });
});

describe('progressOf and temperaturesOf', () => {
  it('reports virtual_sdcard progress in percent while printing or paused, else null', () => {
    const objects = { virtual_sdcard: { progress: 0.3, is_active: true } };
    expect(progressOf(objects, stats('printing'))).toBe(30);
    expect(progressOf(objects, stats('paused'))).toBe(30);
    expect(progressOf(objects, stats('complete'))).toBeNull();
    expect(progressOf({}, stats('printing'))).toBeNull();
  });

  it('reports extruder and bed (from heater_bed) only when present', () => {
    expect(
      temperaturesOf({
        extruder: { temperature: 210.3, target: 215 },
        heater_bed: { temperature: 59.9, target: 60 },
      }),
    ).toEqual({ extruder: { current: 210.3, target: 215 }, bed: { current: 59.9, target: 60 } });
    expect(temperaturesOf({ extruder: { temperature: 25 } })).toEqual({
      extruder: { current: 25, target: null },
    });
  });
});

describe('remoteFileName', () => {
  const id = '9b2c4f6e-0000-4000-8000-000000000000';
  it.each([
    ['Benchy v2', 'Benchy_v2-9b2c4f6e.gcode'],
    ['../../etc/passwd', 'etc_passwd-9b2c4f6e.gcode'],
    ['part "A".gcode', 'part_A-9b2c4f6e.gcode'],
    ['Crème brûlée', 'Creme_brulee-9b2c4f6e.gcode'],
    ['日本語', 'job-9b2c4f6e.gcode'],
    ['', 'job-9b2c4f6e.gcode'],
  ])('turns %j into %s', (name, expected) => {
    expect(remoteFileName(name, id)).toBe(expected);
  });

  it('keeps long names to 80 characters before the suffix', () => {
    expect(remoteFileName('x'.repeat(300), id)).toBe(`${'x'.repeat(80)}-9b2c4f6e.gcode`);
  });
});
