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
    // prettier-ignore
    const args = [
      '-hide_banner',
      '-nostdin',
      '-loglevel',
      'error',
      '-rtsp_transport',
      'tcp',
      '-timeout',
      String(timeoutMs * 1000),
      '-i',
      url,
      '-an',
      '-r',
      String(FRAME_RATE),
      '-q:v',
      '5',
      '-f',
      'mpjpeg',
      'pipe:1',
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
        const said = stderr
          .split(accessCode)
          .join('***')
          .split(encodeURIComponent(accessCode))
          .join('***')
          .trim();
        const last = said.split('\n').pop() ?? '';
        if (/refused|unreachable|timed out|no route/i.test(said) && !framed) {
          finish(cameraUnreachable(`${where} could not be reached: ${last}`));
        } else {
          finish(cameraBadAnswer(`${where}: ffmpeg ended (exit ${code})${last ? `: ${last}` : ''}`));
        }
      });
    });
  }
}
