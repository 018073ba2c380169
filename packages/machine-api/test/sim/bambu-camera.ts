/**
 * The camera server of a Bambu Lab P1/A1 printer in LAN mode, for tests: TLS (a self-signed certificate,
 * as the printer's is signed by Bambu's own CA) on a port of the test's choosing (0: any). It reads the
 * client's 80-byte authentication packet (u32 LE 0x40, 0x3000, 0, 0; `bblp` and the access code, each
 * NUL-padded to 32 bytes) and closes the connection when it is wrong; otherwise it sends, per frame, a
 * 16-byte header (u32 LE payload size, itrack 0, flags 1, 0) and the JPEG (Doridian/OpenBambuAPI video.md).
 * `mode = 'garbage'` sends random bytes instead, `'oversized'` announces a frame of 64 MiB.
 */

import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createServer, type Server, type TLSSocket } from 'node:tls';
import { generate } from 'selfsigned';
import { jpegFrame } from '../camera-frames.js';

export class BambuCameraSim {
  mode: 'normal' | 'garbage' | 'oversized' = 'normal';
  /** The code the camera accepts. */
  accessCode: string;
  connections = 0;
  openConnections = 0;
  refused = 0;
  framesSent = 0;
  private readonly sockets = new Set<TLSSocket>();

  private constructor(
    private readonly server: Server,
    accessCode: string,
    private readonly frameIntervalMs: number,
  ) {
    this.accessCode = accessCode;
  }

  static async start(
    options: { accessCode?: string; port?: number; frameIntervalMs?: number } = {},
  ): Promise<BambuCameraSim> {
    const pems = await generate([{ name: 'commonName', value: '01P00A000000001' }], {
      keySize: 2048,
      algorithm: 'sha256',
    });
    let sim: BambuCameraSim | undefined;
    const server = createServer({ key: pems.private, cert: pems.cert }, (socket) => sim?.serve(socket));
    await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
    sim = new BambuCameraSim(server, options.accessCode ?? '12345678', options.frameIntervalMs ?? 50);
    return sim;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** The JPEG of frame `n` (four distinct pictures, 1280×720 on the real printer, smaller here). */
  frame(n: number): Buffer {
    return jpegFrame(((n - 1) % 4) + 11, 128, 72);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private serve(socket: TLSSocket): void {
    this.connections++;
    this.openConnections++;
    this.sockets.add(socket);
    let timer: NodeJS.Timeout | undefined;
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.openConnections--;
      this.sockets.delete(socket);
      clearInterval(timer);
    });
    let received = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      if (timer) return;
      received = Buffer.concat([received, chunk]);
      if (received.length < 80) return;
      if (!this.accepts(received.subarray(0, 80))) {
        this.refused++;
        socket.end();
        return;
      }
      const send = () => this.send(socket);
      send();
      timer = setInterval(send, this.frameIntervalMs);
    });
  }

  private accepts(packet: Buffer): boolean {
    const text = (offset: number) =>
      packet
        .subarray(offset, offset + 32)
        .toString('ascii')
        .replace(/\0+$/, '');
    return (
      packet.readUInt32LE(0) === 0x40 &&
      packet.readUInt32LE(4) === 0x3000 &&
      text(16) === 'bblp' &&
      text(48) === this.accessCode
    );
  }

  private send(socket: TLSSocket): void {
    if (socket.writableNeedDrain) return;
    if (this.mode === 'garbage') {
      socket.write(randomBytes(4096));
      return;
    }
    const header = Buffer.alloc(16);
    if (this.mode === 'oversized') {
      header.writeUInt32LE(64 * 1024 * 1024, 0);
      socket.write(header);
      socket.write(randomBytes(4096));
      return;
    }
    const jpeg = this.frame(++this.framesSent);
    header.writeUInt32LE(jpeg.length, 0);
    header.writeUInt32LE(0, 4);
    header.writeUInt32LE(1, 8);
    socket.write(header);
    socket.write(jpeg);
  }
}
