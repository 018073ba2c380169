/**
 * Line-by-line reading of text design files (ASCII STL, OBJ) without holding more than one chunk in
 * memory, so that files of hundreds of megabytes can be measured.
 */

import { createReadStream } from 'node:fs';

const CHUNK_BYTES = 1 << 20;

/**
 * Calls `onLine` for every line of the file (without its line ending), synchronously per chunk so that
 * tens of millions of lines do not each cost a promise. Lines are decoded as latin1: the formats read
 * this way are ASCII, and latin1 maps every byte, so a stray byte never throws.
 */
export async function forEachLine(path: string, onLine: (line: string) => void): Promise<void> {
  let rest = '';
  for await (const chunk of createReadStream(path, { highWaterMark: CHUNK_BYTES, encoding: 'latin1' })) {
    const text = rest + (chunk as string);
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      onLine(text.charCodeAt(end - 1) === 13 ? text.slice(start, end - 1) : text.slice(start, end));
      start = end + 1;
    }
    rest = text.slice(start);
  }
  if (rest.length > 0) onLine(rest.endsWith('\r') ? rest.slice(0, -1) : rest);
}
