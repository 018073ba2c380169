/**
 * Line-by-line reading of text design files (ASCII STL, OBJ, G-code) as byte chunks: a line is decoded only
 * once it is complete and known to be shorter than the limit, so a file of one enormous line is refused
 * after reading `maxLineBytes` of it, never held in one string.
 */

import { open } from 'node:fs/promises';
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
  // One buffer reused for every read: a read stream allocates a new one per chunk, and a 100 MB file's
  // worth of them piles up as garbage before the worker's next GC (resident memory, not heap).
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  const file = await open(path, 'r');
  try {
    for (;;) {
      const { bytesRead } = await file.read(buffer, 0, CHUNK_BYTES, null);
      if (bytesRead === 0) break;
      scan(buffer.subarray(0, bytesRead));
    }
  } finally {
    await file.close();
  }
  if (carried > 0) emit(Buffer.concat(carry));

  function scan(chunk: Buffer): void {
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
      // A copy: the buffer is read into again (lengths alone need none).
      if (onLine) carry.push(Buffer.from(chunk.subarray(start)));
    }
  }
}

/**
 * The number of the line that starts at byte `offset` of the file (1 for the first): the newlines before
 * it, plus one. For the message refusing a line found too long while the upload streamed (line-scan.ts).
 */
export async function lineNumberAt(path: string, offset: number): Promise<number> {
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let lines = 1;
  let position = 0;
  const file = await open(path, 'r');
  try {
    while (position < offset) {
      const { bytesRead } = await file.read(buffer, 0, Math.min(CHUNK_BYTES, offset - position), position);
      if (bytesRead === 0) break;
      for (
        let at = buffer.indexOf(NEWLINE);
        at !== -1 && at < bytesRead;
        at = buffer.indexOf(NEWLINE, at + 1)
      ) {
        lines++;
      }
      position += bytesRead;
    }
  } finally {
    await file.close();
  }
  return lines;
}
