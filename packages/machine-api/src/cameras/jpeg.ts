/** What the service checks of a camera's frame before handing it on: a whole JPEG image, and its size. */

import { imageSize } from 'image-size';

/** Starts with the JPEG start-of-image marker and ends with the end-of-image marker. */
export function isWholeJpeg(data: Buffer): boolean {
  return (
    data.length >= 4 &&
    data[0] === 0xff &&
    data[1] === 0xd8 &&
    data[data.length - 2] === 0xff &&
    data[data.length - 1] === 0xd9
  );
}

/** Width and height from the frame header, or null when it has none that can be read. */
export function jpegDimensions(data: Buffer): { width: number; height: number } | null {
  try {
    const size = imageSize(data);
    if (size.type !== 'jpg' || !size.width || !size.height) return null;
    return { width: size.width, height: size.height };
  } catch {
    return null;
  }
}
