/** Reading machine-api's camera answers in tests: the first frames of an MJPEG stream. */

import { mjpegParts, mjpegPartsWithEnd } from './camera-frames.js';

/** Opens `GET url` and returns its first `count` JPEG parts (then hangs up), and the response headers. */
export async function readStreamFrames(
  url: string,
  count: number,
): Promise<{ status: number; contentType: string | null; frames: Buffer[] }> {
  const response = await fetch(url);
  const contentType = response.headers.get('content-type');
  if (response.status !== 200 || !response.body) {
    return { status: response.status, contentType, frames: [] };
  }
  const boundary = /boundary=([^;]+)/.exec(contentType ?? '')?.[1] ?? '';
  const reader = response.body.getReader();
  let pending = Buffer.alloc(0);
  const frames: Buffer[] = [];
  try {
    while (frames.length < count) {
      const { value, done } = await reader.read();
      if (done) break;
      pending = Buffer.concat([pending, value]);
      let consumed = 0;
      for (const [frame, end] of mjpegPartsWithEnd(pending, boundary)) {
        frames.push(Buffer.from(frame));
        consumed = end;
      }
      pending = pending.subarray(consumed);
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return { status: response.status, contentType, frames: frames.slice(0, count).map((f) => Buffer.from(f)) };
}

/** Reads a stream to its end (a stream the service ends), returning how many frames it held. */
export async function readStreamToEnd(url: string): Promise<{ status: number; frames: number }> {
  const response = await fetch(url);
  const boundary = /boundary=([^;]+)/.exec(response.headers.get('content-type') ?? '')?.[1] ?? '';
  const body = Buffer.from(await response.arrayBuffer());
  return { status: response.status, frames: [...mjpegParts(body, boundary)].length };
}
