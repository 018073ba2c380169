import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readGcodeCommands } from '../src/machines/usb/gcode-file.js';
import { checksum, frameLine, parseFirmwareLine, stripComment } from '../src/machines/usb/marlin-protocol.js';
import { portMatches, type SerialPortInfo } from '../src/machines/usb/port-discovery.js';

describe('Marlin line framing', () => {
  it('numbers lines and appends the XOR checksum Marlin verifies', () => {
    // The handshake line OctoPrint sends, with the checksum printers accept.
    expect(frameLine(0, 'M110 N0')).toBe('N0 M110 N0*125');
    expect(checksum('N0 M110 N0')).toBe(125);
    expect(frameLine(12, 'G1 X10.5 Y20 E0.3')).toBe(
      `N12 G1 X10.5 Y20 E0.3*${checksum('N12 G1 X10.5 Y20 E0.3')}`,
    );
  });

  it('strips comments and blanks', () => {
    expect(stripComment('G28 ; home all axes')).toBe('G28');
    expect(stripComment('  ;LAYER_CHANGE')).toBe('');
    expect(stripComment('M117 Printing...  ')).toBe('M117 Printing...');
  });
});

describe('Marlin replies', () => {
  it('recognises ok, including temperatures and ADVANCED_OK', () => {
    expect(parseFirmwareLine('ok')).toEqual({ kind: 'ok', lineNumber: null, temperatures: {} });
    expect(parseFirmwareLine('ok N42 P15 B3')).toEqual({ kind: 'ok', lineNumber: 42, temperatures: {} });
    expect(parseFirmwareLine('ok T:210.1 /210.0 B:59.8 /60.0 @:64 B@:0')).toEqual({
      kind: 'ok',
      lineNumber: null,
      temperatures: { extruder: { current: 210.1, target: 210 }, bed: { current: 59.8, target: 60 } },
    });
  });

  it('recognises resend requests in Marlin and short form', () => {
    expect(parseFirmwareLine('Resend: 17')).toEqual({ kind: 'resend', lineNumber: 17 });
    expect(parseFirmwareLine('rs N17')).toEqual({ kind: 'resend', lineNumber: 17 });
  });

  it('tells line errors (a resend follows) from fatal errors', () => {
    expect(parseFirmwareLine('Error:checksum mismatch, Last Line: 16')).toEqual({
      kind: 'line-error',
      message: 'checksum mismatch, Last Line: 16',
    });
    expect(parseFirmwareLine('Error:Line Number is not Last Line Number+1, Last Line: 16').kind).toBe(
      'line-error',
    );
    expect(parseFirmwareLine('Error:Thermal Runaway, system stopped! Heater_ID: 0')).toEqual({
      kind: 'error',
      message: 'Thermal Runaway, system stopped! Heater_ID: 0',
    });
  });

  it('reads busy keep-alives, host actions, the boot banner and temperature auto-reports', () => {
    expect(parseFirmwareLine('busy: processing')).toEqual({ kind: 'busy', reason: 'processing' });
    expect(parseFirmwareLine('//action:pause filament_runout')).toEqual({
      kind: 'action',
      action: 'pause',
      argument: 'filament_runout',
    });
    expect(parseFirmwareLine('start')).toEqual({ kind: 'start' });
    expect(
      parseFirmwareLine(' T0:200.00 /200.00 T1:25.00 /0.00 B:60.00 /60.00 T:200.00 /200.00 @:0'),
    ).toEqual({
      kind: 'temperature',
      temperatures: {
        extruder: { current: 200, target: 200 },
        extruder1: { current: 25, target: 0 },
        bed: { current: 60, target: 60 },
      },
    });
  });

  it('parses the M115 report and its capabilities', () => {
    expect(
      parseFirmwareLine(
        'FIRMWARE_NAME:Prusa-Firmware 3.13.2 based on Marlin FIRMWARE_URL:https://github.com/prusa3d/Prusa-Firmware ' +
          'PROTOCOL_VERSION:1.0 MACHINE_TYPE:Prusa i3 MK3S EXTRUDER_COUNT:1 UUID:00000000-0000-0000-0000-000000000000',
      ),
    ).toEqual({
      kind: 'firmware-info',
      fields: {
        FIRMWARE_NAME: 'Prusa-Firmware 3.13.2 based on Marlin',
        FIRMWARE_URL: 'https://github.com/prusa3d/Prusa-Firmware',
        PROTOCOL_VERSION: '1.0',
        MACHINE_TYPE: 'Prusa i3 MK3S',
        EXTRUDER_COUNT: '1',
        UUID: '00000000-0000-0000-0000-000000000000',
      },
    });
    expect(parseFirmwareLine('Cap:AUTOREPORT_TEMP:1')).toEqual({
      kind: 'capability',
      name: 'AUTOREPORT_TEMP',
      enabled: true,
    });
    expect(parseFirmwareLine('echo:Unknown command: "X1"')).toEqual({
      kind: 'echo',
      text: 'Unknown command: "X1"',
    });
  });
});

describe('USB port matching', () => {
  const mk3: SerialPortInfo = {
    path: '/dev/ttyACM0',
    vendorId: 0x2c99,
    productId: 0x0002,
    serialNumber: 'CZPX1234',
    manufacturer: 'Prusa Research (prusa3d.com)',
  };
  const ch340: SerialPortInfo = {
    ...mk3,
    path: '/dev/ttyUSB0',
    vendorId: 0x1a86,
    productId: 0x7523,
    serialNumber: null,
  };
  const builtIn: SerialPortInfo = { ...ch340, path: '/dev/ttyS0', vendorId: null, productId: null };

  it('matches on every field that is set and ignores the unset ones', () => {
    expect(portMatches({ vendorId: 0x2c99, productId: 0x0002, serial: 'CZPX1234' }, mk3)).toBe(true);
    expect(portMatches({ vendorId: 0x2c99 }, mk3)).toBe(true);
    expect(portMatches({}, ch340)).toBe(true);
    expect(portMatches({ serial: 'CZPX1234' }, ch340)).toBe(false);
    expect(portMatches({ vendorId: 0x2c99 }, ch340)).toBe(false);
    expect(portMatches({ productId: 0x0001 }, mk3)).toBe(false);
  });

  it('never matches a port that is not a USB device', () => {
    expect(portMatches({}, builtIn)).toBe(false);
  });
});

describe('G-code file reading', () => {
  it('yields commands in order with the bytes each one completes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gcode-file-'));
    try {
      const path = join(dir, 'part.gcode');
      const text = '; header\nG28 ; home\r\n\nG1 X1\n;trailer\n; more\n';
      await writeFile(path, text);
      const commands = [];
      for await (const command of readGcodeCommands(path)) commands.push(command);
      expect(commands).toEqual([
        { command: 'G28', doneOffset: '; header\nG28 ; home\r\n\n'.length },
        { command: 'G1 X1', doneOffset: text.length },
      ]);
      await writeFile(path, 'G28\nG1 X2');
      const unterminated = [];
      for await (const command of readGcodeCommands(path)) unterminated.push(command);
      expect(unterminated).toEqual([
        { command: 'G28', doneOffset: 4 },
        { command: 'G1 X2', doneOffset: 9 },
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
