/**
 * What every camera source promises, and the camera errors the HTTP layer renders. A source knows how to
 * talk to one kind of camera (an HTTP camera, a Moonraker webcam, a Bambu printer's own camera); the hub
 * (hub.ts) owns the one upstream connection per camera and shares its frames between viewers.
 */

import { ServiceError } from '../errors.js';

/** How the service reaches a camera; reported as `camera.kind`. */
export type CameraKind = 'http' | 'moonraker' | 'bambu-jpeg' | 'bambu-rtsps';

/** How to show a frame the right way up (Moonraker's webcam settings; the dashboard applies it). */
export interface CameraOrientation {
  flipHorizontal: boolean;
  flipVertical: boolean;
  /** Clockwise degrees: 0, 90, 180 or 270. */
  rotation: number;
}

export const UPRIGHT: CameraOrientation = { flipHorizontal: false, flipVertical: false, rotation: 0 };

/** Receives the frames of an open upstream, each a whole JPEG image. */
export type FrameSink = (jpeg: Buffer) => void;

export interface CameraSource {
  readonly kind: CameraKind;
  /**
   * Why the camera cannot be used at all right now (a missing tool, a Moonraker without a webcam), or
   * null. Answers from what is known, without I/O: a camera that hangs must delay no other answer.
   */
  unavailable(): string | null;
  /** Optional: the device was asked and has no camera (a Moonraker listing no webcam). */
  absent?(): boolean;
  orientation(): CameraOrientation;
  /**
   * Opens the upstream and hands every JPEG frame to `sink` until `signal` aborts (then it resolves) or
   * the upstream fails (then it rejects with a `CameraError`). Must not buffer more than one frame plus
   * `maxFrameBytes`; must give up with `CameraTimeout` when the first frame takes longer than its timeout.
   */
  stream(sink: FrameSink, signal: AbortSignal): Promise<void>;
  /**
   * One fresh JPEG by a cheaper way than opening the stream (an HTTP camera's snapshot URL), or null when
   * the source has none. Used only while no upstream is open, so a camera never sees a second connection.
   */
  snapshot(signal: AbortSignal): Promise<Buffer> | null;
  /** Releases background work (a registry subscription). */
  close?(): void;
}

/** A camera failure: `CameraTimeout` and `CameraUnreachable` are 503, `CameraBadAnswer` 502. */
export class CameraError extends ServiceError {
  constructor(
    statusCode: 502 | 503,
    errorCode: 'CameraTimeout' | 'CameraUnreachable' | 'CameraBadAnswer' | 'CameraUnavailable',
    message: string,
  ) {
    super(statusCode, errorCode, message);
  }
}

/** The camera did not answer (or sent no frame) within its `timeout_ms`. */
export function cameraTimeout(what: string, timeoutMs: number): CameraError {
  return new CameraError(503, 'CameraTimeout', `${what} did not answer within ${timeoutMs} ms`);
}

/** The camera could not be reached at all (refused, reset, unknown host). */
export function cameraUnreachable(message: string): CameraError {
  return new CameraError(503, 'CameraUnreachable', message);
}

/** The camera answered, but not with pictures (bad credentials, a wrong URL, a hostile or broken stream). */
export function cameraBadAnswer(message: string): CameraError {
  return new CameraError(502, 'CameraBadAnswer', message);
}

/** The camera cannot be used (e.g. `ffmpeg` missing); the message says how to fix it. */
export function cameraUnavailable(message: string): CameraError {
  return new CameraError(503, 'CameraUnavailable', message);
}

/** The machine has no camera. */
export class NoCamera extends ServiceError {
  constructor(machineId: string) {
    super(404, 'NoCamera', `machine "${machineId}" has no camera`);
  }
}

/** Any failure as a `CameraError` (network errors of Node become `CameraUnreachable`). */
export function asCameraError(error: unknown, what: string): CameraError {
  if (error instanceof CameraError) return error;
  const code = (error as { code?: string } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return cameraUnreachable(`${what} could not be reached${code ? ` (${code})` : ''}: ${message}`);
}
