/**
 * An HTTP camera for tests, speaking what mjpg-streamer, ustreamer and IP cameras speak: a JPEG snapshot
 * at `/snapshot.jpg` and an MJPEG stream (`multipart/x-mixed-replace`) at `/stream.mjpg`, optionally behind
 * basic auth, on 127.0.0.1 port 0. It counts its connections so a test can see how many upstreams the
 * service holds. `mode` makes it misbehave: `hang` (accepts, never answers), `oversized` (one frame of
 * `oversizedBytes`), `no-boundary` (endless bytes without a delimiter), `not-jpeg` (parts of text).
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { jpegFrame } from '../camera-frames.js';

export type CameraMode = 'normal' | 'hang' | 'oversized' | 'no-boundary' | 'not-jpeg';

export interface HttpCameraOptions {
  /** Required basic-auth credentials. */
  auth?: { username: string; password: string };
  /** Interval between stream frames. */
  frameIntervalMs?: number;
  /** Send `Content-Length` in each part (default true; mjpg-streamer does, some cameras do not). */
  contentLength?: boolean;
  /** Size of each frame in bytes, padded with a JPEG comment (default: the plain small frame). */
  frameBytes?: number;
}

export class HttpCamera {
  readonly url: string;
  mode: CameraMode = 'normal';
  oversizedBytes = 2 * 1024 * 1024;
  /** Stream connections opened so far, and open now. */
  streamsOpened = 0;
  openStreams = 0;
  snapshots = 0;
  /** Every frame sent, by number. */
  frameCount = 0;
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();

  private constructor(
    private readonly server: Server,
    readonly options: HttpCameraOptions,
  ) {
    const { port } = server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
  }

  static async start(options: HttpCameraOptions = {}): Promise<HttpCamera> {
    let camera: HttpCamera | undefined;
    const server = createServer((request, response) => camera?.handle(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    camera = new HttpCamera(server, options);
    server.on('connection', (socket) => {
      camera!.sockets.add(socket);
      socket.on('close', () => camera!.sockets.delete(socket));
    });
    return camera;
  }

  /** Frame `n` as this camera sends it (eight distinct pictures, in turn). */
  frame(n: number): Buffer {
    const key = (n - 1) % 8;
    let kept = this.frames.get(key);
    if (!kept) {
      kept = this.padded(jpegFrame(key + 1));
      this.frames.set(key, kept);
    }
    return kept;
  }

  private readonly frames = new Map<number, Buffer>();

  private padded(jpeg: Buffer): Buffer {
    const size = this.options.frameBytes;
    if (!size || size <= jpeg.length + 4) return jpeg;
    // A COM segment after SOI pads the image and keeps it a valid JPEG: FFFE + 2-byte length + text.
    const padding = size - jpeg.length;
    const segments: Buffer[] = [jpeg.subarray(0, 2)];
    let left = padding;
    while (left > 0) {
      const body = Math.min(left - 4, 65_533);
      if (body < 0) break;
      const segment = Buffer.alloc(body + 4, 0x20);
      segment[0] = 0xff;
      segment[1] = 0xfe;
      segment.writeUInt16BE(body + 2, 2);
      segments.push(segment);
      left -= body + 4;
    }
    segments.push(jpeg.subarray(2));
    return Buffer.concat(segments);
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private authorised(request: IncomingMessage, response: ServerResponse): boolean {
    const auth = this.options.auth;
    if (!auth) return true;
    const expected = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
    if (request.headers.authorization === expected) return true;
    response.writeHead(401, { 'www-authenticate': 'Basic realm="camera"' }).end();
    return false;
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    if (this.mode === 'hang') return;
    if (!this.authorised(request, response)) return;
    const path = (request.url ?? '/').split('?')[0];
    if (path === '/snapshot.jpg') {
      this.snapshots++;
      const jpeg = this.frame(++this.frameCount);
      response.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': jpeg.length }).end(jpeg);
    } else if (path === '/stream.mjpg') {
      this.stream(response);
    } else {
      response.writeHead(404).end();
    }
  }

  private stream(response: ServerResponse): void {
    this.streamsOpened++;
    this.openStreams++;
    response.on('close', () => {
      this.openStreams--;
      clearInterval(timer);
      this.timers.delete(timer);
    });
    response.writeHead(200, {
      'content-type': 'multipart/x-mixed-replace; boundary=boundarydonotcross',
      'cache-control': 'no-store',
    });
    const send = () => {
      if (response.writableNeedDrain) return;
      switch (this.mode) {
        case 'no-boundary':
          response.write(Buffer.alloc(256 * 1024, 0x41));
          return;
        case 'not-jpeg':
          response.write(
            '--boundarydonotcross\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello\r\n',
          );
          return;
        case 'oversized': {
          response.write(
            `--boundarydonotcross\r\nContent-Type: image/jpeg\r\nContent-Length: ${this.oversizedBytes}\r\n\r\n`,
          );
          response.write(Buffer.alloc(this.oversizedBytes, 0xff));
          return;
        }
        default: {
          const jpeg = this.frame(++this.frameCount);
          const length = this.options.contentLength === false ? '' : `Content-Length: ${jpeg.length}\r\n`;
          response.write(`--boundarydonotcross\r\nContent-Type: image/jpeg\r\n${length}\r\n`);
          response.write(jpeg);
          response.write('\r\n');
        }
      }
    };
    send();
    const timer = setInterval(send, this.options.frameIntervalMs ?? 50);
    this.timers.add(timer);
  }
}
