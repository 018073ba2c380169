/**
 * STL measuring. Binary STL: an 80-byte header, a little-endian uint32 triangle count, then 50 bytes per
 * triangle (normal, three vertices, attribute word). ASCII STL: `solid … facet … vertex x y z … endsolid`.
 * Both are streamed; only the running bounding box is kept.
 */

import { createReadStream } from 'node:fs';
import { InvalidDesign } from '../errors.js';
import { emptyBox, growBox } from './box.js';
import { beyondLimit, type DesignLimits } from './limits.js';
import { forEachLine } from './lines.js';
import type { Measurement } from './measurement.js';

export const STL_HEADER_BYTES = 84;
export const STL_TRIANGLE_BYTES = 50;
const TRIANGLES_PER_CHUNK = 20_000;

/** Measures the first `triangles` triangles of a binary STL (the caller checked the file is long enough). */
export async function measureBinaryStl(
  path: string,
  triangles: number,
  limits: DesignLimits,
): Promise<Measurement> {
  if (triangles === 0) throw new InvalidDesign('binary STL contains no triangles');
  if (triangles > limits.maxTriangles) {
    throw beyondLimit(limits, 'maxTriangles', `binary STL has ${triangles} triangles, more than`);
  }
  const box = emptyBox();
  const end = STL_HEADER_BYTES + triangles * STL_TRIANGLE_BYTES - 1;
  const stream = createReadStream(path, {
    start: STL_HEADER_BYTES,
    end,
    highWaterMark: TRIANGLES_PER_CHUNK * STL_TRIANGLE_BYTES,
  });
  let pending: Buffer = Buffer.alloc(0);
  let seen = 0;
  for await (const chunk of stream) {
    const data = pending.length > 0 ? Buffer.concat([pending, chunk as Buffer]) : (chunk as Buffer);
    const whole = Math.floor(data.length / STL_TRIANGLE_BYTES);
    for (let t = 0; t < whole; t++) {
      // Skip the 12-byte normal: PrusaSlicer recomputes normals, and only vertices decide the size.
      const base = t * STL_TRIANGLE_BYTES + 12;
      for (let v = 0; v < 3; v++) {
        const at = base + v * 12;
        const x = data.readFloatLE(at);
        const y = data.readFloatLE(at + 4);
        const z = data.readFloatLE(at + 8);
        if (!Number.isFinite(x) || !Number.isFinite(y) || !Number.isFinite(z)) {
          throw new InvalidDesign(
            `binary STL triangle ${seen + t + 1} has a coordinate that is not a number`,
          );
        }
        growBox(box, x, y, z);
      }
    }
    seen += whole;
    pending = data.subarray(whole * STL_TRIANGLE_BYTES);
  }
  if (seen !== triangles) {
    throw new InvalidDesign(`binary STL is truncated: it announces ${triangles} triangles but holds ${seen}`);
  }
  return { triangles, box };
}

/** Measures an ASCII STL; rejects files without `endsolid`, with malformed vertices or without facets. */
export async function measureAsciiStl(path: string, limits: DesignLimits): Promise<Measurement> {
  const box = emptyBox();
  let vertices = 0;
  let facets = 0;
  let ended = false;
  await forEachLine(path, limits, 'ASCII STL', (raw, lineNumber) => {
    const line = raw.trim();
    if (line.startsWith('vertex')) {
      const parts = line.split(/\s+/);
      const x = Number(parts[1]);
      const y = Number(parts[2]);
      const z = Number(parts[3]);
      if (parts.length !== 4 || !Number.isFinite(x) || !Number.isFinite(y) || !Number.isFinite(z)) {
        throw new InvalidDesign(
          `ASCII STL line ${lineNumber} is not a vertex of three numbers: "${clip(line)}"`,
        );
      }
      growBox(box, x, y, z);
      vertices++;
    } else if (line.startsWith('endfacet')) {
      if (vertices !== (facets + 1) * 3) {
        throw new InvalidDesign(
          `ASCII STL facet ending on line ${lineNumber} does not have exactly 3 vertices`,
        );
      }
      facets++;
      if (facets > limits.maxTriangles) {
        throw beyondLimit(limits, 'maxTriangles', 'ASCII STL has more triangles than');
      }
    } else if (line.startsWith('endsolid')) {
      ended = true;
    }
  });
  if (!ended) throw new InvalidDesign('ASCII STL is truncated: it has no "endsolid" line');
  if (facets === 0) throw new InvalidDesign('ASCII STL contains no triangles');
  return { triangles: facets, box };
}

/** Quotes at most 60 characters of user content in an error message. */
export function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}
