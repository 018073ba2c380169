/**
 * One viewer of a live stream, writing `multipart/x-mixed-replace` to its HTTP response. A viewer that
 * does not keep up skips frames: a frame is written only when the response has no unsent backlog
 * (`writableNeedDrain`), so the service holds at most one frame per viewer however slowly it reads.
 */

import type { ServerResponse } from 'node:http';
import type { CameraError } from './camera.js';
import type { FrameViewer } from './hub.js';

export const MJPEG_BOUNDARY = 'machine-api-frame';
export const MJPEG_CONTENT_TYPE = `multipart/x-mixed-replace; boundary=${MJPEG_BOUNDARY}`;
const TRAILER = Buffer.from('\r\n');

export class MjpegWriter implements FrameViewer {
  /** Frames not written because the viewer had not read the previous one yet. */
  skipped = 0;

  constructor(
    private readonly response: ServerResponse,
    private readonly onEnd: (error: CameraError | null) => void,
  ) {}

  frame(jpeg: Buffer): void {
    const response = this.response;
    if (response.destroyed || response.writableEnded) return;
    if (response.writableNeedDrain) {
      this.skipped++;
      return;
    }
    response.cork();
    response.write(
      `--${MJPEG_BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: ${jpeg.length}\r\n\r\n`,
    );
    response.write(jpeg);
    response.write(TRAILER);
    response.uncork();
  }

  end(error: CameraError | null): void {
    this.onEnd(error);
    if (!this.response.destroyed && !this.response.writableEnded) this.response.end();
  }
}
