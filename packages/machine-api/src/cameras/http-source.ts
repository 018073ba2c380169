/**
 * A camera with HTTP URLs (configured as `camera = { snapshot_url, stream_url }`, or found in Moonraker's
 * webcam registry): a JPEG snapshot URL and/or an MJPEG (`multipart/x-mixed-replace`) stream URL, with
 * optional basic auth (given as `username`/`password` or in the URL's user info). Without a stream URL the
 * stream is made of snapshots, two a second. URLs are shown only without credentials and query.
 */

import type { Dispatcher } from 'undici';
import { LazyModule } from '../lazy-module.js';
import {
  CameraError,
  type CameraKind,
  type CameraOrientation,
  type CameraSource,
  cameraBadAnswer,
  cameraTimeout,
  cameraUnreachable,
  type FrameSink,
  UPRIGHT,
} from './camera.js';
import { MjpegParser, mjpegBoundary } from './mjpeg-parser.js';

const undici = new LazyModule(() => import('undici'));

/** Interval of the snapshots a snapshot-only camera's stream is made of. */
const SNAPSHOT_STREAM_INTERVAL_MS = 500;

export interface HttpCameraSettings {
  snapshotUrl: string | null;
  streamUrl: string | null;
  username?: string | undefined;
  password?: string | undefined;
  timeoutMs: number;
  maxFrameBytes: number;
}

/** Closes a response body that is not (or no longer) read; its abort error has no one to go to. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** The URL without user info, query or fragment: what may appear in answers and logs. */
export function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '(an invalid URL)';
  }
}

/** The URL without its user info, and the `Authorization` header the credentials make. */
function requestParts(
  url: string,
  settings: HttpCameraSettings,
): { url: string; headers: Record<string, string> } {
  const parsed = new URL(url);
  let username = settings.username;
  let password = settings.password;
  if (parsed.username || parsed.password) {
    username ??= decodeURIComponent(parsed.username);
    password ??= decodeURIComponent(parsed.password);
    parsed.username = '';
    parsed.password = '';
  }
  const headers: Record<string, string> = { accept: 'image/jpeg, multipart/x-mixed-replace, */*;q=0.1' };
  if (username !== undefined || password !== undefined) {
    headers.authorization = `Basic ${Buffer.from(`${username ?? ''}:${password ?? ''}`).toString('base64')}`;
  }
  return { url: parsed.toString(), headers };
}

export class HttpCameraSource implements CameraSource {
  constructor(
    private readonly settings: HttpCameraSettings,
    readonly kind: CameraKind = 'http',
    private readonly turned: CameraOrientation = UPRIGHT,
  ) {}

  snapshot(signal: AbortSignal): Promise<Buffer> | null {
    return this.settings.snapshotUrl ? this.fetchSnapshot(signal) : null;
  }

  unavailable(): string | null {
    return null;
  }

  orientation(): CameraOrientation {
    return this.turned;
  }

  async stream(sink: FrameSink, signal: AbortSignal): Promise<void> {
    if (this.settings.streamUrl) return this.streamMjpeg(this.settings.streamUrl, sink, signal);
    while (!signal.aborted) {
      const attempt = AbortSignal.any([signal, AbortSignal.timeout(this.settings.timeoutMs)]);
      let jpeg: Buffer;
      try {
        jpeg = await this.fetchSnapshot(attempt);
      } catch (error) {
        if (signal.aborted) return;
        if (attempt.aborted) throw cameraTimeout(`the camera at ${this.shown()}`, this.settings.timeoutMs);
        throw error;
      }
      sink(jpeg);
      await new Promise((resolve) => setTimeout(resolve, SNAPSHOT_STREAM_INTERVAL_MS));
    }
  }

  private shown(): string {
    return shownUrl(this.settings.streamUrl ?? this.settings.snapshotUrl ?? '');
  }

  private async open(url: string, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    const { request } = await undici.get();
    const parts = requestParts(url, this.settings);
    try {
      const response = await request(parts.url, {
        method: 'GET',
        headers: parts.headers,
        signal,
        headersTimeout: this.settings.timeoutMs,
        bodyTimeout: this.settings.timeoutMs,
      });
      if (response.statusCode < 200 || response.statusCode > 299) {
        discard(response.body);
        const why =
          response.statusCode === 401 || response.statusCode === 403 ? ' (check username and password)' : '';
        throw cameraBadAnswer(`the camera at ${shownUrl(url)} answered HTTP ${response.statusCode}${why}`);
      }
      return response;
    } catch (error) {
      if (signal.aborted) throw error;
      throw this.failure(error, url);
    }
  }

  /** A failure of the HTTP exchange as a camera error that names the URL without its secrets. */
  private failure(error: unknown, url: string): CameraError {
    if (error instanceof CameraError) return error;
    const code = (error as { code?: string }).code;
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
      return cameraTimeout(`the camera at ${shownUrl(url)}`, this.settings.timeoutMs);
    }
    return cameraUnreachable(
      `the camera at ${shownUrl(url)} could not be reached or broke off${code ? ` (${code})` : ''}`,
    );
  }

  /** One JPEG from the snapshot URL, read up to `maxFrameBytes`. */
  private async fetchSnapshot(signal: AbortSignal): Promise<Buffer> {
    const url = this.settings.snapshotUrl!;
    const response = await this.open(url, signal);
    const chunks: Buffer[] = [];
    let length = 0;
    try {
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        length += chunk.length;
        if (length > this.settings.maxFrameBytes) {
          throw cameraBadAnswer(
            `the camera at ${shownUrl(url)} sent a snapshot larger than max_frame_mib (${this.settings.maxFrameBytes / (1024 * 1024)} MiB)`,
          );
        }
        chunks.push(chunk);
      }
    } catch (error) {
      if (signal.aborted) throw error;
      throw this.failure(error, url);
    } finally {
      discard(response.body);
    }
    const jpeg = Buffer.concat(chunks, length);
    if (jpeg.length < 2 || jpeg[0] !== 0xff || jpeg[1] !== 0xd8) {
      throw cameraBadAnswer(
        `the camera at ${shownUrl(url)} answered with something that is not a JPEG image`,
      );
    }
    return jpeg;
  }

  private async streamMjpeg(url: string, sink: FrameSink, signal: AbortSignal): Promise<void> {
    const firstFrame = new AbortController();
    const timer = setTimeout(() => firstFrame.abort(), this.settings.timeoutMs);
    const connection = AbortSignal.any([signal, firstFrame.signal]);
    let framed = false;
    try {
      const response = await this.open(url, connection);
      const contentType = response.headers['content-type'];
      const boundary = mjpegBoundary(Array.isArray(contentType) ? contentType[0] : contentType);
      if (!boundary) {
        discard(response.body);
        throw cameraBadAnswer(
          `the camera at ${shownUrl(url)} did not answer with an MJPEG stream (content type ${JSON.stringify(contentType ?? null)})`,
        );
      }
      const parser = new MjpegParser(boundary, this.settings.maxFrameBytes, (jpeg) => {
        if (!framed) clearTimeout(timer);
        framed = true;
        sink(jpeg);
      });
      try {
        for await (const chunk of response.body as AsyncIterable<Buffer>) parser.push(chunk);
      } finally {
        discard(response.body);
      }
    } catch (error) {
      if (signal.aborted) return;
      if (firstFrame.signal.aborted && !framed) {
        throw cameraTimeout(`the camera at ${shownUrl(url)}`, this.settings.timeoutMs);
      }
      throw this.failure(error, url);
    } finally {
      clearTimeout(timer);
    }
  }
}
