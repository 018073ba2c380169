/**
 * Line-by-line reading of text design files (ASCII STL, OBJ, G-code) as byte chunks: a line is decoded only
 * once it is complete and known to be shorter than the limit, so a file of one enormous line is refused
 * after reading `maxLineBytes` of it, never held in one string.
 */

import { createReadStream } from 'node:fs';
import { beyondLimit, type DesignLimits } from './limits.js';

const CHUNK_BYTES = 1 << 20;
const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/**
 * Calls `onLine` for every line of the file (without its line ending, decoded as latin1: the formats read
 * this way are ASCII, and latin1 maps every byte, so a stray byte never throws). With `onLine` null only
 * the line lengths are checked. Throws `InvalidDesign` naming `[server] max_line_bytes` for a longer line.
 */
export async function forEachLine(
  path: string,
  limits: DesignLimits,
  what: string,
  onLine: ((line: string, lineNumber: number) => void) | null,
): Promise<void> {
  const max = limits.maxLineBytes;
  // The start of the current line, from earlier chunks; its total length stays ≤ max.
  let carry: Buffer[] = [];
  let carried = 0;
  let lineNumber = 0;
  const tooLong = () =>
    beyondLimit(limits, 'maxLineBytes', `line ${lineNumber + 1} of the ${what} is longer than`);
  const emit = (line: Buffer) => {
    lineNumber++;
    if (!onLine) return;
    const end = line.length > 0 && line[line.length - 1] === CARRIAGE_RETURN ? line.length - 1 : line.length;
    onLine(line.toString('latin1', 0, end), lineNumber);
  };
  for await (const data of createReadStream(path, { highWaterMark: CHUNK_BYTES })) {
    const chunk = data as Buffer;
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE, start); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      if (carried + (end - start) > max) throw tooLong();
      if (!onLine) {
        // Only lengths are checked: no Buffer per line (millions in a large G-code file, all garbage).
        lineNumber++;
        carried = 0;
      } else if (carried > 0) {
        emit(Buffer.concat([...carry, chunk.subarray(start, end)]));
        carry = [];
        carried = 0;
      } else {
        emit(chunk.subarray(start, end));
      }
      start = end + 1;
    }
    if (start < chunk.length) {
      carried += chunk.length - start;
      if (carried > max) throw tooLong();
      // A copy: the stream may reuse its buffer (lengths alone need none).
      if (onLine) carry.push(Buffer.from(chunk.subarray(start)));
    }
  }
  if (carried > 0) emit(Buffer.concat(carry));
}
