/**
 * The Marlin host protocol, as text: framing of outgoing lines (`N<line> <gcode>*<checksum>`) and the
 * classification of every line the firmware sends back. No I/O here, so every rule is unit-testable.
 *
 * References: Marlin `queue.cpp` (line numbers, XOR checksum, `Resend:` + `ok` after a line error,
 * ADVANCED_OK `ok N<line> P<planner> B<buffer>`), `M115` capability report, HOST_KEEPALIVE `busy:`,
 * HOST_ACTION_COMMANDS `//action:`; OctoPrint's comm layer handles the same set.
 */

import type { Temperature } from '../machine.js';

/** XOR of every byte of `text`, the checksum Marlin verifies after `*`. */
export function checksum(text: string): number {
  let sum = 0;
  for (const byte of Buffer.from(text, 'latin1')) sum ^= byte;
  return sum;
}

/** `N<line> <command>*<checksum>`, the frame Marlin accepts with line-number and checksum checks. */
export function frameLine(lineNumber: number, command: string): string {
  const body = `N${lineNumber} ${command}`;
  return `${body}*${checksum(body)}`;
}

/** The G-code of one file line without its `;` comment and surrounding blanks; '' when nothing is left. */
export function stripComment(line: string): string {
  const semicolon = line.indexOf(';');
  return (semicolon === -1 ? line : line.slice(0, semicolon)).trim();
}

/** Everything the firmware can say, as far as the host cares. */
export type FirmwareMessage =
  | { kind: 'ok'; lineNumber: number | null; temperatures: Record<string, Temperature> }
  | { kind: 'resend'; lineNumber: number }
  | { kind: 'busy'; reason: string }
  /** A line error Marlin follows with `Resend:` + `ok`; nothing to do but wait for those. */
  | { kind: 'line-error'; message: string }
  | { kind: 'error'; message: string }
  | { kind: 'temperature'; temperatures: Record<string, Temperature> }
  | { kind: 'firmware-info'; fields: Record<string, string> }
  | { kind: 'capability'; name: string; enabled: boolean }
  | { kind: 'action'; action: string; argument: string }
  /** The boot banner: the firmware has (re)started and forgot every line number. */
  | { kind: 'start' }
  | { kind: 'echo'; text: string }
  | { kind: 'other'; text: string };

// Marlin's line errors (STR_ERR_LINE_NO, STR_ERR_CHECKSUM_MISMATCH, STR_ERR_NO_CHECKSUM) and the wordings
// of Prusa/RepRap-derived firmwares that OctoPrint also treats as "a Resend follows".
const LINE_ERROR =
  /checksum mismatch|wrong checksum|line number is not last line number|expected line|no line number with checksum|no checksum with line number|missing checksum|format error/i;

const TEMPERATURE_FIELD = /(?:^|\s)(T\d*|B|C):\s*(-?\d+(?:\.\d+)?)(?:\s*\/\s*(-?\d+(?:\.\d+)?))?/g;

/** Sensors of a Marlin temperature report (`T:210.0 /210.0 B:60.1 /60.0 @:0`), keyed `extruder`, `bed`… */
export function parseTemperatures(text: string): Record<string, Temperature> {
  const readings: Record<string, Temperature> = {};
  const hasNumberedTool = /(?:^|\s)T\d+:/.test(text);
  for (const match of text.matchAll(TEMPERATURE_FIELD)) {
    const [, sensor, current, target] = match;
    if (sensor === undefined || current === undefined) continue;
    const reading: Temperature = {
      current: Number(current),
      target: target === undefined ? null : Number(target),
    };
    if (sensor === 'B') readings['bed'] = reading;
    else if (sensor === 'C') readings['chamber'] = reading;
    else if (sensor === 'T') {
      // With several tools Marlin prints the active one as bare `T` and each tool as `T<n>`; keep the latter.
      if (!hasNumberedTool) readings['extruder'] = reading;
    } else {
      const tool = Number(sensor.slice(1));
      readings[tool === 0 ? 'extruder' : `extruder${tool}`] = reading;
    }
  }
  return readings;
}

// Keys of the M115 report are upper-case words followed by ':' at the start or after a blank, so values may
// hold blanks and URLs (`SOURCE_CODE_URL:https://…`), as OctoPrint parses it.
const FIRMWARE_KEY = /(?:^|\s)([A-Z][A-Z0-9_]*):/g;

/** `FIRMWARE_NAME:Marlin 2.1.2 … MACHINE_TYPE:Ender-3 UUID:…` as a key → value map. */
export function parseFirmwareInfo(text: string): Record<string, string> {
  const keys = [...text.matchAll(FIRMWARE_KEY)];
  const fields: Record<string, string> = {};
  keys.forEach((match, i) => {
    const key = match[1]!;
    const start = match.index + match[0].length;
    const end = keys[i + 1]?.index ?? text.length;
    fields[key] = text.slice(start, end).trim();
  });
  return fields;
}

/** Classifies one line received from the firmware (without its line terminator). */
export function parseFirmwareLine(raw: string): FirmwareMessage {
  const line = raw.trim();
  if (line === 'ok' || line.startsWith('ok ') || line.startsWith('ok:')) {
    const advanced = /^ok\s+N(\d+)/.exec(line);
    return {
      kind: 'ok',
      lineNumber: advanced?.[1] === undefined ? null : Number(advanced[1]),
      temperatures: parseTemperatures(line.slice(2)),
    };
  }
  const resend = /^(?:resend|rs)[:\s]\s*N?(\d+)/i.exec(line);
  if (resend?.[1] !== undefined) return { kind: 'resend', lineNumber: Number(resend[1]) };
  if (line.startsWith('busy:')) return { kind: 'busy', reason: line.slice(5).trim() };
  if (/^error:/i.test(line)) {
    const message = line.slice(6).trim();
    return LINE_ERROR.test(message) ? { kind: 'line-error', message } : { kind: 'error', message };
  }
  if (line.startsWith('//action:')) {
    const [action = '', ...rest] = line.slice(9).trim().split(/\s+/);
    return { kind: 'action', action, argument: rest.join(' ') };
  }
  if (line.startsWith('FIRMWARE_NAME:')) return { kind: 'firmware-info', fields: parseFirmwareInfo(line) };
  const capability = /^Cap:([A-Z0-9_]+):([01])$/.exec(line);
  if (capability?.[1] !== undefined) {
    return { kind: 'capability', name: capability[1], enabled: capability[2] === '1' };
  }
  if (line === 'start') return { kind: 'start' };
  if (/^(?:T\d*|B):\s*-?\d/.test(line)) return { kind: 'temperature', temperatures: parseTemperatures(line) };
  if (line.startsWith('echo:')) return { kind: 'echo', text: line.slice(5).trim() };
  return { kind: 'other', text: line };
}
