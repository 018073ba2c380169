/**
 * Wavefront OBJ measuring: `v x y z [w]` vertex lines grow the box, `f a b c …` lines are faces. Streamed;
 * every face must reference existing vertices, so a truncated file that lost vertices is caught.
 */

import { InvalidDesign } from '../errors.js';
import { emptyBox, growBox } from './box.js';
import { beyondLimit, type DesignLimits } from './limits.js';
import { forEachLine } from './lines.js';
import type { Measurement } from './measurement.js';
import { clip } from './stl.js';

export async function measureObj(path: string, limits: DesignLimits): Promise<Measurement> {
  const box = emptyBox();
  let vertices = 0;
  let faces = 0;
  // Faces may only refer to vertices defined before them (OBJ indices are 1-based, negatives count back).
  await forEachLine(path, limits, 'OBJ file', (raw, lineNumber) => {
    const line = raw.trim();
    if (line.startsWith('v ') || line.startsWith('v\t')) {
      const parts = line.split(/\s+/);
      const x = Number(parts[1]);
      const y = Number(parts[2]);
      const z = Number(parts[3]);
      if (parts.length < 4 || !Number.isFinite(x) || !Number.isFinite(y) || !Number.isFinite(z)) {
        throw new InvalidDesign(`OBJ line ${lineNumber} is not a vertex of three numbers: "${clip(line)}"`);
      }
      growBox(box, x, y, z);
      vertices++;
      if (vertices > limits.maxVertices)
        throw beyondLimit(limits, 'maxVertices', 'OBJ file has more vertices than');
    } else if (line.startsWith('f ') || line.startsWith('f\t')) {
      const corners = line.split(/\s+/).slice(1);
      if (corners.length < 3) {
        throw new InvalidDesign(
          `OBJ line ${lineNumber} is a face with fewer than 3 corners: "${clip(line)}"`,
        );
      }
      for (const corner of corners) {
        const index = Number.parseInt(corner, 10);
        const resolved = index < 0 ? vertices + index + 1 : index;
        if (!Number.isInteger(index) || index === 0 || resolved < 1 || resolved > vertices) {
          throw new InvalidDesign(
            `OBJ line ${lineNumber} refers to vertex ${corner.split('/')[0]}, but only ${vertices} are defined before it`,
          );
        }
      }
      // A polygon of n corners is sliced as n - 2 triangles.
      faces += corners.length - 2;
      if (faces > limits.maxTriangles)
        throw beyondLimit(limits, 'maxTriangles', 'OBJ file has more triangles than');
    }
  });
  if (faces === 0) throw new InvalidDesign('OBJ file contains no faces');
  return { triangles: faces, box };
}
