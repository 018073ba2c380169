/**
 * Design-file inspection: what kind of file an upload is (decided from its content; the client's file
 * name is only a hint) and how big the design is. Everything that cannot be printed is rejected here with
 * `InvalidDesign`, before a slicer ever runs.
 */

import { open, stat } from 'node:fs/promises';
import { InvalidDesign } from '../errors.js';
import type { Volume } from '../machines/machine.js';
import { boxSize } from './box.js';
import { beyondLimit, DEFAULT_DESIGN_LIMITS, type DesignLimits } from './limits.js';
import type { LineScan } from './line-scan.js';
import { forEachLine, lineNumberAt } from './lines.js';
import type { Measurement } from './measurement.js';
import { measureObj } from './obj.js';
import { measureAsciiStl, measureBinaryStl, STL_HEADER_BYTES, STL_TRIANGLE_BYTES } from './stl.js';
import { measure3mf } from './threemf.js';

export type DesignKind = 'stl' | '3mf' | 'obj' | 'gcode';

export interface DesignInfo {
  kind: DesignKind;
  /** For STL: binary or ASCII encoding. */
  encoding?: 'binary' | 'ascii';
  /** Triangles of a mesh design; null for G-code. */
  triangles: number | null;
  /** Width × depth × height of the design in millimetres; null for G-code (it is placed already). */
  size: Volume | null;
}

/** How much of the file is looked at to tell text formats apart. */
export const SNIFF_BYTES = 64 * 1024;

type Detected =
  | { kind: 'binary-stl'; triangles: number }
  | { kind: 'ascii-stl' }
  | { kind: '3mf' }
  | { kind: 'obj' }
  | { kind: 'gcode' };

/**
 * Classifies and measures the design at `path`; throws `InvalidDesign` with a reason a person can act on.
 * `scanned` is the line check made while the file was uploaded (line-scan.ts): when it was made against
 * the same limit over the whole file, G-code is not read again.
 */
export async function inspectDesign(
  path: string,
  fileName: string,
  limits: DesignLimits = DEFAULT_DESIGN_LIMITS,
  scanned?: LineScan,
): Promise<DesignInfo> {
  const detected = await detect(path, fileName);
  switch (detected.kind) {
    case 'gcode':
      // Machines read G-code line by line (a USB printer streams it): no line may be endless.
      await checkGcodeLines(path, limits, scanned);
      return { kind: 'gcode', triangles: null, size: null };
    case 'binary-stl':
      return {
        ...mesh('stl', await measureBinaryStl(path, detected.triangles, limits)),
        encoding: 'binary',
      };
    case 'ascii-stl':
      return { ...mesh('stl', await measureAsciiStl(path, limits)), encoding: 'ascii' };
    case '3mf':
      return mesh('3mf', await measure3mf(path, limits));
    case 'obj':
      return mesh('obj', await measureObj(path, limits));
  }
}

/**
 * G-code whose lines the upload stream has checked (line-scan.ts) needs nothing more than its first bytes:
 * this tells it from them, on the calling thread (a bounded look at 64 KiB, well under a millisecond), so
 * that such an upload needs no worker at all. Null when the design has to be inspected in full: another
 * kind, a line too long (the refusal names its line), or no design at all (the worker words the refusal).
 */
export function scannedGcode(scanned: LineScan, fileName: string, limits: DesignLimits): DesignInfo | null {
  if (scanned.longLineAt !== null || scanned.maxLineBytes !== limits.maxLineBytes) return null;
  try {
    return detectHead(scanned.head, scanned.bytes, fileName).kind === 'gcode'
      ? { kind: 'gcode', triangles: null, size: null }
      : null;
  } catch {
    return null;
  }
}

async function checkGcodeLines(path: string, limits: DesignLimits, scanned?: LineScan): Promise<void> {
  if (!scanned || scanned.maxLineBytes !== limits.maxLineBytes || scanned.bytes !== (await stat(path)).size) {
    await forEachLine(path, limits, 'G-code', null);
    return;
  }
  if (scanned.longLineAt === null) return;
  const line = await lineNumberAt(path, scanned.longLineAt);
  throw beyondLimit(limits, 'maxLineBytes', `line ${line} of the G-code is longer than`);
}

function mesh(kind: DesignKind, measurement: Measurement): DesignInfo {
  return { kind, triangles: measurement.triangles, size: boxSize(measurement.box) };
}

async function detect(path: string, fileName: string): Promise<Detected> {
  const handle = await open(path, 'r');
  let head: Buffer;
  let size: number;
  try {
    size = (await handle.stat()).size;
    head = Buffer.alloc(Math.min(size, SNIFF_BYTES));
    await handle.read(head, 0, head.length, 0);
  } finally {
    await handle.close();
  }
  return detectHead(head, size, fileName);
}

/**
 * The kind of a design from its first `SNIFF_BYTES` bytes and its size; throws `InvalidDesign` for what
 * is no design at all.
 */
function detectHead(head: Buffer, size: number, fileName: string): Detected {
  if (size === 0) throw new InvalidDesign('the uploaded file is empty');
  if (head.subarray(0, 4).equals(Buffer.from('PK\x03\x04', 'latin1'))) return { kind: '3mf' };

  // Binary STL first: its 80-byte header may well start with "solid", but its size gives it away.
  const announced = size >= STL_HEADER_BYTES ? head.readUInt32LE(80) : -1;
  const expectedSize = STL_HEADER_BYTES + announced * STL_TRIANGLE_BYTES;
  if (announced >= 0 && expectedSize === size) return { kind: 'binary-stl', triangles: announced };

  if (isText(head)) {
    const text = head.toString('latin1');
    if (/^\s*solid\b/.test(text)) return { kind: 'ascii-stl' };
    const textKind = classifyText(text);
    if (textKind) return { kind: textKind };
  } else if (announced >= 0 && /\.stl$/i.test(fileName)) {
    if (expectedSize > size) {
      throw new InvalidDesign(
        `binary STL is truncated: its header announces ${announced} triangles (${expectedSize} bytes) ` +
          `but the file has ${size} bytes`,
      );
    }
    // Some exporters pad the file by a few bytes; more than a triangle's worth means the count lies,
    // and a slicer counting by file size would then read triangles that were never measured.
    if (size - expectedSize >= STL_TRIANGLE_BYTES) {
      throw new InvalidDesign(
        `binary STL triangle count does not match its size: its header announces ${announced} triangles ` +
          `(${expectedSize} bytes) but the file has ${size} bytes`,
      );
    }
    return { kind: 'binary-stl', triangles: announced };
  }
  throw new InvalidDesign(
    `${fileName || 'the uploaded file'} is not a design this service can print: ` +
      'expected STL (ASCII or binary), 3MF, OBJ or G-code',
  );
}

/** Text if there is no NUL byte and almost every byte is printable ASCII or whitespace. */
function isText(head: Buffer): boolean {
  let odd = 0;
  for (const byte of head) {
    if (byte === 0) return false;
    if (byte < 9 || (byte > 13 && byte < 32) || byte === 127) odd++;
  }
  return odd <= head.length / 100;
}

/**
 * OBJ or G-code by counting the statements typical of each in the first lines. A head made only of `;`
 * comments is G-code too: slicers write long comment headers (thumbnails) before the first command.
 */
function classifyText(text: string): 'obj' | 'gcode' | null {
  let gcode = 0;
  let obj = 0;
  let comments = 0;
  let other = 0;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    if (/^[GMT]\d+(\s|;|$)/i.test(line)) gcode++;
    else if (/^(v|vt|vn|f|o|g|s|mtllib|usemtl)\s/.test(line)) obj++;
    else if (line.startsWith(';')) comments++;
    else other++;
  }
  if (gcode === 0 && obj === 0) return comments > 0 && other === 0 ? 'gcode' : null;
  return gcode > obj ? 'gcode' : 'obj';
}
