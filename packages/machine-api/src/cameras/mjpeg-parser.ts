/**
 * A parser of MJPEG over HTTP (`multipart/x-mixed-replace; boundary=…`, as mjpg-streamer, ustreamer,
 * camera-streamer, IP cameras and `ffmpeg -f mpjpeg` send it): each part is a JPEG image, with or without
 * a `Content-Length` header. Written here rather than taken from a library because the form-data parsers
 * (busboy and its forks) accept only `multipart/form-data` and expect a closing delimiter that an endless
 * stream never sends.
 *
 * Bounded: at most one frame (`maxFrameBytes`) plus one header block is ever held. A part larger than
 * that, a stream that sends no boundary within that many bytes, a header block over 16 KiB or a part that
 * is not a JPEG image throws `CameraBadAnswer`, and the caller ends that upstream.
 */

import { ByteQueue } from './byte-queue.js';
import { cameraBadAnswer } from './camera.js';

const MAX_HEADER_BYTES = 16 * 1024;
const CRLF = Buffer.from('\r\n');
const BLANK_LINE = /\r?\n\r?\n/;

/** The `boundary` parameter of a `multipart/x-mixed-replace` content type, or null. */
export function mjpegBoundary(contentType: string | undefined): string | null {
  if (!contentType || !/^\s*multipart\/x-mixed-replace\s*;/i.test(contentType)) return null;
  const match = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const boundary = match?.[1] ?? match?.[2];
  return boundary && boundary.length <= 200 ? boundary : null;
}

type State = { kind: 'delimiter' } | { kind: 'headers' } | { kind: 'body'; length: number | null };

export class MjpegParser {
  private readonly queue: ByteQueue;
  /** `--boundary`; cameras that declare the boundary with its dashes already are taken at their word. */
  private readonly delimiter: Buffer;
  /** Where the delimiter search of a body without `Content-Length` resumes (relative to the queue's start). */
  private scanFrom = 0;
  /** Bytes passed over while looking for a delimiter since the last part. */
  private skipped = 0;
  private state: State = { kind: 'delimiter' };

  constructor(
    boundary: string,
    private readonly maxFrameBytes: number,
    private readonly onFrame: (jpeg: Buffer) => void,
  ) {
    this.delimiter = Buffer.from(boundary.startsWith('--') ? boundary : `--${boundary}`);
    this.queue = new ByteQueue(maxFrameBytes + MAX_HEADER_BYTES + this.delimiter.length + 8);
  }

  /** Feeds bytes of the response body; throws `CameraBadAnswer` when the stream breaks a rule above. */
  push(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length) {
      const room = this.queue.room();
      if (room === 0) throw this.overflow();
      const piece = chunk.subarray(offset, offset + room);
      this.queue.append(piece);
      offset += piece.length;
      this.drain();
    }
  }

  /** Parses as many whole parts as are queued. */
  private drain(): void {
    for (;;) {
      const bytes = this.queue.view();
      if (this.state.kind === 'delimiter') {
        const at = bytes.indexOf(this.delimiter);
        if (at === -1) {
          // Keep only what could be the beginning of a delimiter split across chunks.
          const passed = Math.max(0, bytes.length - this.delimiter.length);
          this.skipped += passed;
          this.queue.consume(passed);
          if (this.skipped > this.maxFrameBytes) throw this.overflow();
          return;
        }
        this.skipped = 0;
        const lineEnd = bytes.indexOf('\n', at + this.delimiter.length);
        if (lineEnd === -1) return;
        this.queue.consume(lineEnd + 1);
        this.state = { kind: 'headers' };
      } else if (this.state.kind === 'headers') {
        const text = bytes.subarray(0, Math.min(bytes.length, MAX_HEADER_BYTES)).toString('latin1');
        const blank = BLANK_LINE.exec(text);
        if (!blank) {
          if (bytes.length >= MAX_HEADER_BYTES) {
            throw cameraBadAnswer(`the camera's stream sent a part header over ${MAX_HEADER_BYTES} bytes`);
          }
          return;
        }
        this.queue.consume(blank.index + blank[0].length);
        this.state = { kind: 'body', length: contentLength(text.slice(0, blank.index)) };
        this.scanFrom = 0;
        if (this.state.length !== null && this.state.length > this.maxFrameBytes) throw this.overflow();
      } else if (this.state.length !== null) {
        if (bytes.length < this.state.length) return;
        this.emit(this.queue.take(this.state.length));
        this.state = { kind: 'delimiter' };
      } else {
        // No length given: the part ends where the next delimiter begins (preceded by its CRLF).
        const at = bytes.indexOf(this.delimiter, this.scanFrom);
        if (at === -1) {
          if (bytes.length > this.maxFrameBytes) throw this.overflow();
          this.scanFrom = Math.max(0, bytes.length - this.delimiter.length);
          return;
        }
        let end = at;
        if (end >= 2 && bytes.subarray(end - 2, end).equals(CRLF)) end -= 2;
        else if (end >= 1 && bytes[end - 1] === 0x0a) end -= 1;
        this.emit(this.queue.take(end));
        this.state = { kind: 'delimiter' };
      }
    }
  }

  private emit(part: Buffer): void {
    if (part.length < 2 || part[0] !== 0xff || part[1] !== 0xd8) {
      throw cameraBadAnswer("the camera's stream sent a part that is not a JPEG image");
    }
    this.onFrame(part);
  }

  private overflow() {
    const mib = this.maxFrameBytes / (1024 * 1024);
    return this.state.kind === 'body'
      ? cameraBadAnswer(`the camera sent a frame larger than max_frame_mib (${mib} MiB)`)
      : cameraBadAnswer(`the camera's stream sent no multipart boundary within ${mib} MiB`);
  }
}

function contentLength(headers: string): number | null {
  const match = /^content-length:[ \t]*(\d{1,12})[ \t]*$/im.exec(headers);
  return match ? Number(match[1]) : null;
}
