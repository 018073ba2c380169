/**
 * Real JPEG frames for camera tests, encoded by jpeg-js: each frame a flat colour picked from its number,
 * so that a test can tell frames apart, and decodable by any JPEG decoder.
 */

import jpeg from 'jpeg-js';

const encoded = new Map<string, Buffer>();

/**
 * A `width`×`height` baseline JPEG whose colour encodes `n` (jpeg-js takes a few hundred milliseconds per
 * encoding, so each frame is encoded once).
 */
export function jpegFrame(n: number, width = 64, height = 48): Buffer {
  const key = `${n}:${width}x${height}`;
  let frame = encoded.get(key);
  if (!frame) {
    frame = encode(n, width, height);
    encoded.set(key, frame);
  }
  return frame;
}

function encode(n: number, width: number, height: number): Buffer {
  const data = Buffer.alloc(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    data[i * 4] = (n * 37) % 256;
    data[i * 4 + 1] = (n * 91) % 256;
    data[i * 4 + 2] = (n * 53) % 256;
    data[i * 4 + 3] = 255;
  }
  return jpeg.encode({ data, width, height }, 80).data;
}

/** Decodes a JPEG (throws when it is not one) and returns its size. */
export function decodeJpeg(bytes: Uint8Array): { width: number; height: number } {
  const image = jpeg.decode(bytes, { maxMemoryUsageInMB: 64 });
  return { width: image.width, height: image.height };
}

/** The frames of a `multipart/x-mixed-replace` body with Content-Length headers (as machine-api sends). */
export function* mjpegParts(body: Buffer, boundary: string): Generator<Buffer> {
  for (const [part] of mjpegPartsWithEnd(body, boundary)) yield part;
}

/** Each whole part of `body` with the offset just after it. */
export function* mjpegPartsWithEnd(body: Buffer, boundary: string): Generator<[Buffer, number]> {
  let at = 0;
  const delimiter = Buffer.from(`--${boundary}\r\n`);
  for (;;) {
    const start = body.indexOf(delimiter, at);
    if (start === -1) return;
    const headerEnd = body.indexOf('\r\n\r\n', start);
    if (headerEnd === -1) return;
    const headers = body.subarray(start, headerEnd).toString('latin1');
    const length = Number(/content-length: (\d+)/i.exec(headers)?.[1]);
    const bodyStart = headerEnd + 4;
    if (bodyStart + length > body.length) return;
    yield [body.subarray(bodyStart, bodyStart + length), bodyStart + length];
    at = bodyStart + length;
  }
}
