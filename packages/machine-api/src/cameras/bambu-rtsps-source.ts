/**
 * The camera of a Bambu Lab X1, H2 or P2S printer in LAN mode: the RTSPS stream on port 322
 * (`rtsps://bblp:<access code>@<host>:322/streaming/live/1`, Doridian/OpenBambuAPI video.md), turned into
 * JPEG frames by `ffmpeg` (Debian's package) writing `multipart/x-mixed-replace` to its stdout, which the
 * MJPEG parser reads. `ffmpeg` is optional: without it these cameras report `available = false` and why.
 * The access code is on ffmpeg's command line (ffmpeg has no other way to take RTSP credentials): it is
 * never logged, and removed from the ffmpeg messages that errors quote.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import {
  type CameraOrientation,
  type CameraSource,
  cameraBadAnswer,
  cameraTimeout,
  cameraUnreachable,
  type FrameSink,
  UPRIGHT,
} from './camera.js';
import { MjpegParser } from './mjpeg-parser.js';

export const FFMPEG_MISSING = 'ffmpeg is not installed; this camera (RTSPS) needs it: apt-get install ffmpeg';

/** Frames per second asked of ffmpeg: enough to watch a printer, cheap to encode. */
const FRAME_RATE = 5;
const STDERR_TAIL_BYTES = 2048;

let ffmpegPath: string | null | undefined;

/** Where `ffmpeg` is on PATH, looked up once per process. */
export function findFfmpeg(): string | null {
  if (ffmpegPath !== undefined) return ffmpegPath;
  ffmpegPath = null;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, 'ffmpeg'), constants.X_OK);
      ffmpegPath = join(dir, 'ffmpeg');
      break;
    } catch {
      // not in this directory
    }
  }
  return ffmpegPath;
}

export interface BambuRtspsSettings {
  host: string;
  port: number;
  accessCode: string;
  timeoutMs: number;
  maxFrameBytes: number;
}

export class BambuRtspsSource implements CameraSource {
  readonly kind = 'bambu-rtsps' as const;

  constructor(
    private readonly settings: BambuRtspsSettings,
    private readonly ffmpeg: string | null = findFfmpeg(),
  ) {}

  unavailable(): string | null {
    return this.ffmpeg ? null : FFMPEG_MISSING;
  }

  orientation(): CameraOrientation {
    return UPRIGHT;
  }

  /** The printer serves only the stream (and only one connection to it): snapshots come from the hub. */
  snapshot(): null {
    return null;
  }

  stream(sink: FrameSink, signal: AbortSignal): Promise<void> {
    const { host, port, accessCode, timeoutMs, maxFrameBytes } = this.settings;
    if (!this.ffmpeg) return Promise.reject(cameraBadAnswer(FFMPEG_MISSING));
    const where = `the printer's camera at rtsps://${host}:${port}`;
    const url = `rtsps://bblp:${encodeURIComponent(accessCode)}@${host}:${port}/streaming/live/1`;
    // biome-ignore format: each ffmpeg option beside its value reads better than one word per line
    const args = [
      '-hide_banner', '-nostdin', '-loglevel', 'error',
      '-rtsp_transport', 'tcp',
      '-timeout', String(timeoutMs * 1000),
      // ffmpeg probes a live input for up to 5 s before it writes anything, which would hold every first
      // frame (and so every snapshot) that long. It need not learn the picture's size while probing: its
      // filters are set up from the first decoded frame.
      '-analyzeduration', '500000',
      '-i', url,
      '-an', '-r', String(FRAME_RATE), '-q:v', '5',
      // Each frame goes to the pipe as soon as it is encoded, not when ffmpeg's 32 KiB buffer fills.
      '-flush_packets', '1',
      '-f', 'mpjpeg', 'pipe:1',
    ];
    return new Promise<void>((resolve, reject) => {
      const child: ChildProcess = spawn(this.ffmpeg!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      let framed = false;
      let done = false;
      const finish = (error: unknown | null) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM');
          const kill = setTimeout(() => child.kill('SIGKILL'), 2000);
          kill.unref();
          child.once('exit', () => clearTimeout(kill));
        }
        if (error === null || signal.aborted) resolve();
        else reject(error);
      };
      const onAbort = () => finish(null);
      signal.addEventListener('abort', onAbort, { once: true });
      const timer = setTimeout(() => finish(cameraTimeout(where, timeoutMs)), timeoutMs);
      const parser = new MjpegParser('ffmpeg', maxFrameBytes, (jpeg) => {
        if (!framed) clearTimeout(timer);
        framed = true;
        sink(jpeg);
      });
      child.stdout!.on('data', (chunk: Buffer) => {
        try {
          parser.push(chunk);
        } catch (error) {
          finish(error);
        }
      });
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
      });
      child.once('error', (error) =>
        finish(cameraBadAnswer(`ffmpeg could not be started: ${error.message}`)),
      );
      child.once('close', (code) => {
        finish(ffmpegFailure(where, url, accessCode, stderr, code, framed));
      });
    });
  }
}

/**
 * Why ffmpeg ended, from its last words: ffmpeg ends its error output with `<input url>: <reason>`, after
 * lines from its libraries (`[tls @ 0x…] …`). The URL, and the access code wherever it appears, are left out.
 */
export function ffmpegFailure(
  where: string,
  url: string,
  accessCode: string,
  stderr: string,
  code: number | null,
  framed: boolean,
): Error {
  let redacted = stderr.replaceAll(url, '');
  if (accessCode) {
    redacted = redacted.replaceAll(accessCode, '***').replaceAll(encodeURIComponent(accessCode), '***');
  }
  const lines = redacted
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const reason = (lines.filter((line) => line.startsWith(': ')).pop() ?? lines.pop() ?? '').replace(
    /^: /,
    '',
  );
  if (/\b401\b|authorization failed/i.test(reason)) {
    return cameraBadAnswer(
      `${where} refused the access code (${reason}): check the access code and that LAN-only liveview is on`,
    );
  }
  if (/refused|unreachable|timed out|no route/i.test(reason) && !framed) {
    return cameraUnreachable(`${where} could not be reached: ${reason}`);
  }
  // ffmpeg ends with status 0 when the printer closes the stream: that is still the end of the camera's stream.
  if (framed) return cameraBadAnswer(`${where} ended the stream${reason ? `: ${reason}` : ''}`);
  return cameraBadAnswer(`${where}: ffmpeg ended (exit ${code})${reason ? `: ${reason}` : ''}`);
}
