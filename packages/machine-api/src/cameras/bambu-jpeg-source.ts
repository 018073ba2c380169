/**
 * The camera of a Bambu Lab P1 or A1 printer in LAN mode: a TLS connection to port 6000 on which the
 * printer sends one JPEG per frame. Framing (Doridian/OpenBambuAPI video.md; little-endian integers):
 * - the client first sends 80 bytes: payload size 0x40, type 0x3000, flags 0, 0 (four u32), then the
 *   user name `bblp` and the LAN access code, each right-padded with NUL to 32 bytes;
 * - the printer then sends, per frame, a 16-byte header (u32 payload size, itrack, flags, 0) followed by
 *   that many bytes of JPEG (FF D8 … FF D9).
 * A printer that refuses the access code closes the connection without a frame. The printer's certificate
 * is signed by Bambu's own CA, so (as for MQTT) it is not verified.
 */

import { connect, type TLSSocket } from 'node:tls';
import { ByteQueue } from './byte-queue.js';
import {
  type CameraOrientation,
  type CameraSource,
  cameraBadAnswer,
  cameraTimeout,
  cameraUnreachable,
  type FrameSink,
  UPRIGHT,
} from './camera.js';
import { isWholeJpeg } from './jpeg.js';

const HEADER_BYTES = 16;
const FIELD_BYTES = 32;
const STREAM_TYPE = 0x3000;
/** Errors of reaching the printer at all (anything else is the printer, or whatever answers, misbehaving). */
const NETWORK_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EAI_AGAIN',
]);

export interface BambuJpegSettings {
  host: string;
  port: number;
  accessCode: string;
  /** Sent as the TLS server name (the printer's certificate is issued to its serial). */
  serial: string | null;
  timeoutMs: number;
  maxFrameBytes: number;
}

/** The 80-byte authentication packet. */
export function bambuAuthPacket(accessCode: string): Buffer {
  const packet = Buffer.alloc(HEADER_BYTES + 2 * FIELD_BYTES);
  packet.writeUInt32LE(2 * FIELD_BYTES, 0);
  packet.writeUInt32LE(STREAM_TYPE, 4);
  packet.write('bblp', HEADER_BYTES, FIELD_BYTES, 'ascii');
  packet.write(accessCode, HEADER_BYTES + FIELD_BYTES, FIELD_BYTES, 'ascii');
  return packet;
}

export class BambuJpegSource implements CameraSource {
  readonly kind = 'bambu-jpeg' as const;

  constructor(private readonly settings: BambuJpegSettings) {}

  unavailable(): string | null {
    return null;
  }

  orientation(): CameraOrientation {
    return UPRIGHT;
  }

  /** The printer serves only the stream (and only one connection to it): snapshots come from the hub. */
  snapshot(): null {
    return null;
  }

  stream(sink: FrameSink, signal: AbortSignal): Promise<void> {
    const { host, port, timeoutMs, maxFrameBytes } = this.settings;
    const where = `the printer's camera at ${host}:${port}`;
    return new Promise<void>((resolve, reject) => {
      const queue = new ByteQueue(HEADER_BYTES + maxFrameBytes);
      let framed = false;
      let done = false;
      const socket: TLSSocket = connect({
        host,
        port,
        rejectUnauthorized: false,
        ...(this.settings.serial ? { servername: this.settings.serial } : {}),
      });
      const finish = (error: unknown | null) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        socket.destroy();
        if (error === null || signal.aborted) resolve();
        else reject(error);
      };
      const onAbort = () => finish(null);
      signal.addEventListener('abort', onAbort, { once: true });
      const timer = setTimeout(() => finish(cameraTimeout(where, timeoutMs)), timeoutMs);
      socket.setTimeout(timeoutMs, () => finish(cameraTimeout(where, timeoutMs)));
      socket.once('secureConnect', () => socket.write(bambuAuthPacket(this.settings.accessCode)));
      socket.on('data', (chunk: Buffer) => {
        try {
          let offset = 0;
          while (offset < chunk.length && !done) {
            const room = queue.room();
            if (room === 0) throw cameraBadAnswer(`${where} sent a frame larger than max_frame_mib`);
            const piece = chunk.subarray(offset, offset + room);
            queue.append(piece);
            offset += piece.length;
            for (
              let frame = nextFrame(queue, maxFrameBytes, where);
              frame;
              frame = nextFrame(queue, maxFrameBytes, where)
            ) {
              if (!framed) clearTimeout(timer);
              framed = true;
              sink(frame);
            }
          }
        } catch (error) {
          finish(error);
        }
      });
      socket.once('error', (error: Error & { code?: string }) => {
        finish(
          !framed && NETWORK_ERRORS.has(error.code ?? '')
            ? cameraUnreachable(`${where} could not be reached (${error.code})`)
            : cameraBadAnswer(`${where} broke the TLS session (${error.code ?? error.message})`),
        );
      });
      socket.once('close', () =>
        finish(
          framed
            ? cameraBadAnswer(`${where} closed the connection`)
            : cameraBadAnswer(
                `${where} closed the connection without sending a frame: check the access code and that LAN-only liveview is on`,
              ),
        ),
      );
    });
  }
}

/** The next whole frame in `queue`, or null when more bytes are needed; throws on a broken frame. */
function nextFrame(queue: ByteQueue, maxFrameBytes: number, where: string): Buffer | null {
  const bytes = queue.view();
  if (bytes.length < HEADER_BYTES) return null;
  const size = bytes.readUInt32LE(0);
  if (size > maxFrameBytes) {
    throw cameraBadAnswer(
      `${where} announced a frame of ${size} bytes, over max_frame_mib (${maxFrameBytes / (1024 * 1024)} MiB)`,
    );
  }
  if (bytes.length < HEADER_BYTES + size) return null;
  queue.consume(HEADER_BYTES);
  const jpeg = queue.take(size);
  if (!isWholeJpeg(jpeg)) throw cameraBadAnswer(`${where} sent a frame that is not a JPEG image`);
  return jpeg;
}
