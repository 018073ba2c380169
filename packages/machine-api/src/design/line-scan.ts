/**
 * The line-length check of text designs (see lines.ts), made while an upload streams to disk: once the
 * last byte has arrived the verdict is known, and checking a large G-code file no longer needs a second
 * pass over it after the upload (115 ms for 100 MB, answered only after). The stream passes every chunk
 * on unchanged and looks at a handful of bytes per chunk: only whether every window of `maxLineBytes`
 * holds a newline matters, and the last newline of a window is found by searching backwards from its
 * end, which on real G-code (lines of tens of bytes) stops after a few bytes. The kind of the design is
 * decided later, from the whole file (inspect.ts); the verdict is used only if it is G-code.
 */

import { Transform, type TransformCallback } from 'node:stream';
import { SNIFF_BYTES } from './inspect.js';

const NEWLINE = 0x0a;

/** What the scan found: where the first line longer than `maxLineBytes` starts, if there is one. */
export interface LineScan {
  /** The limit the lines were checked against (the verdict holds for this limit only). */
  maxLineBytes: number;
  /** Byte offset of the first line longer than the limit (line ending excluded); null when none is. */
  longLineAt: number | null;
  /** Bytes scanned: the verdict is about a file of exactly this size. */
  bytes: number;
  /** The file's first bytes, as much as inspect.ts looks at to tell the kind of a design. */
  head: Buffer;
}

export class LineLengthScan extends Transform {
  private readonly max: number;
  /** Bytes of the file before the current chunk. */
  private offset = 0;
  /** Byte offset at which the current (unfinished) line starts. */
  private lineStart = 0;
  private longLineAt: number | null = null;
  /** Copies of the chunks that make up the file's first `SNIFF_BYTES` bytes. */
  private readonly head: Buffer[] = [];

  constructor(maxLineBytes: number) {
    super();
    this.max = maxLineBytes;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.longLineAt === null) this.scan(chunk);
    // Copied: the parser may reuse its buffers once the chunk has gone on.
    if (this.offset < SNIFF_BYTES) this.head.push(Buffer.from(chunk.subarray(0, SNIFF_BYTES - this.offset)));
    this.offset += chunk.length;
    callback(null, chunk);
  }

  /** The verdict, once the stream has ended. */
  result(): LineScan {
    // The last line has no newline: it is too long if what is left of the file is.
    if (this.longLineAt === null && this.offset - this.lineStart > this.max) this.longLineAt = this.lineStart;
    return {
      maxLineBytes: this.max,
      longLineAt: this.longLineAt,
      bytes: this.offset,
      head: Buffer.concat(this.head),
    };
  }

  private scan(chunk: Buffer): void {
    // Index of the current line's start in this chunk (negative when it began in an earlier one).
    let start = this.lineStart - this.offset;
    for (;;) {
      // The current line's newline must come at this index or before it. It is never negative: the
      // previous chunk ended before it, or the line would have been judged there.
      const deadline = start + this.max;
      if (deadline >= chunk.length) {
        // Every line finished in this chunk is shorter than the window; the next starts after the last.
        const last = chunk.lastIndexOf(NEWLINE);
        this.lineStart = this.offset + (last >= Math.max(start, 0) ? last + 1 : start);
        return;
      }
      const newline = chunk.lastIndexOf(NEWLINE, deadline);
      if (newline < Math.max(start, 0)) {
        this.longLineAt = this.offset + start;
        return;
      }
      start = newline + 1;
    }
  }
}
