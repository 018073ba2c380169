/**
 * The RTSPS camera of a Bambu Lab X1/H2/P2S printer in LAN mode, for tests: RTSP 1.0 (RFC 2326) over TLS
 * (a self-signed certificate, as the printer's is signed by Bambu's own CA) on a port of the test's choosing
 * (0: any), serving `/streaming/live/1` (Doridian/OpenBambuAPI video.md) to user `bblp` with the access
 * code as password. ffmpeg cannot serve RTSP PLAY and Debian has no RTSP server for this path, hence this.
 *
 * It answers OPTIONS without credentials and challenges everything else with 401 (`Digest`, as live555 and
 * the printer do, or `Basic`), DESCRIBEs one H.264 track (RFC 6184: `a=rtpmap:96 H264/90000`,
 * packetization-mode=1, sprop-parameter-sets), accepts only `RTP/AVP/TCP;interleaved=0-1` at SETUP, and after
 * PLAY sends RTP inside the RTSP connection (`$`, channel, u16 length, packet: RFC 2326 §10.12). The video is
 * an Annex-B H.264 stream the test made (`makeTestH264`): split at start codes into NAL units, grouped into
 * access units at each access unit delimiter (which is not sent), sent as single-NAL packets or FU-A
 * fragments over `MAX_PAYLOAD` bytes, the marker bit on an access unit's last packet, 90 kHz timestamps,
 * looped forever at `frameIntervalMs` per access unit.
 */

import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createServer, type Server, type TLSSocket } from 'node:tls';
import { promisify } from 'node:util';
import { generate } from 'selfsigned';

export const STREAM_PATH = '/streaming/live/1';
/** Largest RTP payload: a NAL unit over this goes as FU-A fragments (RFC 6184 §5.8). */
const MAX_PAYLOAD = 1400;
const CLOCK_RATE = 90_000;
const REALM = 'LIVE555 Streaming Media';
const REQUEST_LIMIT = 64 * 1024;

/**
 * Makes the test video once: `frames` frames of ffmpeg's test pattern, `width`×`height`, 5 frames per second,
 * H.264 baseline without B-frames, a key frame every 5 frames, an access unit delimiter before each frame.
 */
export async function makeTestH264(dir: string, width = 320, height = 240, frames = 10): Promise<string> {
  const path = join(dir, `testsrc-${width}x${height}.h264`);
  // biome-ignore format: each ffmpeg option beside its value reads better than one word per line
  const args = [
    '-hide_banner', '-loglevel', 'error', '-nostdin', '-y',
    '-f', 'lavfi', '-i', `testsrc=size=${width}x${height}:rate=5`, '-frames:v', String(frames),
    '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-g', '5', '-bf', '0', '-threads', '1',
    '-x264-params', 'aud=1', '-bsf:v', 'h264_mp4toannexb', '-f', 'h264', path,
  ];
  try {
    await promisify(execFile)('ffmpeg', args);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') {
      throw new Error('this test needs ffmpeg (with libx264): apt-get install ffmpeg');
    }
    throw error;
  }
  return path;
}

/** The NAL units of an Annex-B byte stream (start codes 00 00 01 or 00 00 00 01 removed). */
export function splitAnnexB(stream: Buffer): Buffer[] {
  const starts: { at: number; payload: number }[] = [];
  for (let i = 0; i + 2 < stream.length; i++) {
    if (stream[i] === 0 && stream[i + 1] === 0 && stream[i + 2] === 1) {
      starts.push({ at: i > 0 && stream[i - 1] === 0 ? i - 1 : i, payload: i + 3 });
      i += 2;
    }
  }
  return starts
    .map((start, n) => stream.subarray(start.payload, starts[n + 1]?.at ?? stream.length))
    .filter((nal) => nal.length > 0);
}

const nalType = (nal: Buffer): number => nal[0]! & 0x1f;

/** The access units of the stream: NAL units between delimiters (type 9), the delimiters left out. */
function accessUnits(nals: Buffer[]): Buffer[][] {
  const units: Buffer[][] = [];
  for (const nal of nals) {
    if (nalType(nal) === 9 || units.length === 0) units.push([]);
    if (nalType(nal) !== 9) units[units.length - 1]!.push(nal);
  }
  return units.filter((unit) => unit.length > 0);
}

/** The RTP payloads of one NAL unit: itself, or FU-A fragments (indicator, header with S/E bits, bytes). */
export function rtpPayloads(nal: Buffer): Buffer[] {
  if (nal.length <= MAX_PAYLOAD) return [nal];
  const indicator = (nal[0]! & 0xe0) | 28;
  const payloads: Buffer[] = [];
  for (let at = 1; at < nal.length; at += MAX_PAYLOAD - 2) {
    const end = Math.min(at + MAX_PAYLOAD - 2, nal.length);
    const header = (at === 1 ? 0x80 : 0) | (end === nal.length ? 0x40 : 0) | nalType(nal);
    payloads.push(Buffer.concat([Buffer.from([indicator, header]), nal.subarray(at, end)]));
  }
  return payloads;
}

export interface RtspsCameraOptions {
  /** The Annex-B H.264 file to loop (from `makeTestH264`). */
  video: string;
  accessCode?: string;
  /** How the camera asks for credentials (default `digest`). */
  auth?: 'digest' | 'basic';
  port?: number;
  /** Time between access units (default 200 ms: the 5 frames per second of the test video). */
  frameIntervalMs?: number;
}

interface Request {
  method: string;
  url: string;
  headers: Map<string, string>;
}

export class BambuRtspsCameraSim {
  accessCode: string;
  /** TLS connections so far, and open now; requests refused for credentials; sessions that reached PLAY. */
  connections = 0;
  openConnections = 0;
  refused = 0;
  plays = 0;
  packetsSent = 0;
  readonly methods: string[] = [];
  private readonly sockets = new Set<TLSSocket>();
  private readonly nonce = randomBytes(16).toString('hex');

  private constructor(
    private readonly server: Server,
    private readonly units: Buffer[][],
    private readonly sps: Buffer,
    private readonly pps: Buffer,
    private readonly options: RtspsCameraOptions,
  ) {
    this.accessCode = options.accessCode ?? '12345678';
  }

  static async start(options: RtspsCameraOptions): Promise<BambuRtspsCameraSim> {
    const nals = splitAnnexB(await readFile(options.video));
    const sps = nals.find((nal) => nalType(nal) === 7);
    const pps = nals.find((nal) => nalType(nal) === 8);
    if (!sps || !pps) throw new Error(`${options.video} has no SPS/PPS: not an H.264 Annex-B stream`);
    const pems = await generate([{ name: 'commonName', value: '00M09A000000001' }], {
      keySize: 2048,
      algorithm: 'sha256',
    });
    let sim: BambuRtspsCameraSim | undefined;
    const server = createServer({ key: pems.private, cert: pems.cert }, (socket) => sim?.serve(socket));
    await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
    sim = new BambuRtspsCameraSim(server, accessUnits(nals), sps, pps, options);
    return sim;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Stops at once, as a printer that is switched off: every connection is cut. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private serve(socket: TLSSocket): void {
    this.connections++;
    this.openConnections++;
    this.sockets.add(socket);
    let timer: NodeJS.Timeout | undefined;
    let pending = Buffer.alloc(0);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.openConnections--;
      this.sockets.delete(socket);
      clearInterval(timer);
    });
    const play = () => {
      this.plays++;
      const ssrc = randomBytes(4).readUInt32BE(0);
      let sequence = 0;
      let unit = 0;
      const step = Math.round(CLOCK_RATE / (1000 / (this.options.frameIntervalMs ?? 200)));
      const send = () => {
        if (socket.writableNeedDrain) return; // a real camera drops what the network cannot take
        const payloads = this.units[unit % this.units.length]!.flatMap(rtpPayloads);
        const timestamp = (unit * step) >>> 0;
        payloads.forEach((payload, n) => {
          const packet = Buffer.alloc(4 + 12 + payload.length);
          packet.write('$', 0, 'latin1');
          packet.writeUInt8(0, 1);
          packet.writeUInt16BE(12 + payload.length, 2);
          packet.writeUInt8(0x80, 4); // RTP version 2, no padding, extension or CSRC
          packet.writeUInt8((n === payloads.length - 1 ? 0x80 : 0) | 96, 5);
          packet.writeUInt16BE(sequence++ & 0xffff, 6);
          packet.writeUInt32BE(timestamp, 8);
          packet.writeUInt32BE(ssrc, 12);
          payload.copy(packet, 16);
          socket.write(packet);
          this.packetsSent++;
        });
        unit++;
      };
      send();
      timer = setInterval(send, this.options.frameIntervalMs ?? 200);
    };
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        // The client's RTCP receiver reports come interleaved on the same connection: skipped.
        if (pending[0] === 0x24) {
          if (pending.length < 4 || pending.length < 4 + pending.readUInt16BE(2)) return;
          pending = pending.subarray(4 + pending.readUInt16BE(2));
          continue;
        }
        const end = pending.indexOf('\r\n\r\n');
        if (end === -1) {
          if (pending.length > REQUEST_LIMIT) socket.destroy();
          return;
        }
        const request = parseRequest(pending.subarray(0, end).toString('latin1'));
        const bodyLength = Number(request?.headers.get('content-length') ?? 0);
        if (pending.length < end + 4 + bodyLength) return;
        pending = pending.subarray(end + 4 + bodyLength);
        if (!request) {
          socket.end('RTSP/1.0 400 Bad Request\r\n\r\n');
          return;
        }
        if (this.answer(socket, request) === 'play' && !timer) play();
      }
    });
  }

  /** Answers one request; says when the session should start playing. */
  private answer(socket: TLSSocket, request: Request): 'play' | null {
    this.methods.push(request.method);
    const cseq = request.headers.get('cseq') ?? '0';
    const reply = (status: string, headers: Record<string, string> = {}, body = '') => {
      const lines = [`RTSP/1.0 ${status}`, `CSeq: ${cseq}`, 'Server: simulated Bambu camera'];
      for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
      if (body) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
      socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`);
    };
    if (request.method === 'OPTIONS') {
      reply('200 OK', { Public: 'OPTIONS, DESCRIBE, SETUP, TEARDOWN, PLAY, GET_PARAMETER' });
      return null;
    }
    if (!this.authorized(request)) {
      this.refused++;
      const challenge =
        this.options.auth === 'basic'
          ? `Basic realm="${REALM}"`
          : `Digest realm="${REALM}", nonce="${this.nonce}"`;
      reply('401 Unauthorized', { 'WWW-Authenticate': challenge });
      return null;
    }
    const base = `rtsps://127.0.0.1:${this.port}${STREAM_PATH}`;
    if (!request.url.startsWith(base)) {
      reply('404 Stream Not Found');
      return null;
    }
    switch (request.method) {
      case 'DESCRIBE':
        reply('200 OK', { 'Content-Type': 'application/sdp', 'Content-Base': `${base}/` }, this.sdp());
        return null;
      case 'SETUP': {
        const transport = request.headers.get('transport') ?? '';
        if (!/^RTP\/AVP\/TCP;.*interleaved=0-1/.test(transport)) {
          reply('461 Unsupported Transport');
          return null;
        }
        reply('200 OK', { Transport: 'RTP/AVP/TCP;unicast;interleaved=0-1', Session: '5F1A2B3C;timeout=60' });
        return null;
      }
      case 'PLAY':
        reply('200 OK', {
          Session: '5F1A2B3C',
          Range: 'npt=0.000-',
          'RTP-Info': `url=${base}/track1;seq=0;rtptime=0`,
        });
        return 'play';
      case 'TEARDOWN':
        reply('200 OK', { Session: '5F1A2B3C' });
        socket.end();
        return null;
      default: // GET_PARAMETER (keep-alive) and anything else harmless
        reply('200 OK', { Session: '5F1A2B3C' });
        return null;
    }
  }

  private sdp(): string {
    const profile = this.sps.subarray(1, 4).toString('hex');
    const sets = `${this.sps.toString('base64')},${this.pps.toString('base64')}`;
    return [
      'v=0',
      'o=- 1 1 IN IP4 127.0.0.1',
      's=Bambu Lab camera (simulated)',
      'c=IN IP4 0.0.0.0',
      't=0 0',
      'a=control:*',
      'a=range:npt=0-',
      'm=video 0 RTP/AVP 96',
      'a=rtpmap:96 H264/90000',
      `a=fmtp:96 packetization-mode=1;profile-level-id=${profile};sprop-parameter-sets=${sets}`,
      'a=control:track1',
      '',
    ].join('\r\n');
  }

  /** Basic (RFC 7617) or Digest without qop (RFC 2069, what RTSP clients send) of `bblp` and the access code. */
  private authorized(request: Request): boolean {
    const header = request.headers.get('authorization') ?? '';
    if (this.options.auth === 'basic') {
      const decoded = Buffer.from(header.replace(/^Basic /, ''), 'base64').toString('utf8');
      return header.startsWith('Basic ') && decoded === `bblp:${this.accessCode}`;
    }
    if (!header.startsWith('Digest ')) return false;
    const params = new Map([...header.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
    const md5 = (text: string) => createHash('md5').update(text).digest('hex');
    const ha1 = md5(`bblp:${REALM}:${this.accessCode}`);
    const ha2 = md5(`${request.method}:${params.get('uri')}`);
    return (
      params.get('username') === 'bblp' &&
      params.get('nonce') === this.nonce &&
      params.get('response') === md5(`${ha1}:${this.nonce}:${ha2}`)
    );
  }
}

function parseRequest(head: string): Request | null {
  const [line, ...rest] = head.split('\r\n');
  const match = /^([A-Z_]+) (\S+) RTSP\/1\.0$/.exec(line ?? '');
  if (!match) return null;
  const headers = new Map<string, string>();
  for (const header of rest) {
    const colon = header.indexOf(':');
    if (colon > 0) headers.set(header.slice(0, colon).trim().toLowerCase(), header.slice(colon + 1).trim());
  }
  return { method: match[1]!, url: match[2]!, headers };
}
