/**
 * Reads a G-code file as the commands to stream, without holding the file in memory. Each command carries
 * the byte offset up to which the file is done once the firmware has acknowledged it, so progress is the
 * fraction of the file's bytes acknowledged (comments and blank lines count with the command before them,
 * and the last command ends the file, so the final `ok` means exactly 100 %).
 */

import { createReadStream } from 'node:fs';
import { stripComment } from './marlin-protocol.js';

export interface GcodeCommand {
  command: string;
  /** Bytes of the file covered once this command is acknowledged. */
  doneOffset: number;
}

const NEWLINE = 0x0a;

/** The file's commands in order, comments and blank lines stripped. */
export async function* readGcodeCommands(path: string, signal?: AbortSignal): AsyncGenerator<GcodeCommand> {
  let pending: string | null = null;
  let offset = 0;
  let carry: Buffer = Buffer.alloc(0);
  for await (const chunk of createReadStream(path, { signal }) as AsyncIterable<Buffer>) {
    let data = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    let newline = data.indexOf(NEWLINE);
    while (newline !== -1) {
      const command = stripComment(data.subarray(0, newline).toString('latin1'));
      if (command !== '') {
        if (pending !== null) yield { command: pending, doneOffset: offset };
        pending = command;
      }
      offset += newline + 1;
      data = data.subarray(newline + 1);
      newline = data.indexOf(NEWLINE);
    }
    carry = Buffer.from(data);
  }
  const last = stripComment(carry.toString('latin1'));
  if (last !== '') {
    if (pending !== null) yield { command: pending, doneOffset: offset };
    pending = last;
  }
  offset += carry.length;
  if (pending !== null) yield { command: pending, doneOffset: offset };
}
