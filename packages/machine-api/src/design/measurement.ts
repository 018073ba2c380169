/** What measuring a design file yields. */

import type { Box } from './box.js';

export interface Measurement {
  /** Number of triangles (STL, 3MF) or faces (OBJ) in the design. */
  triangles: number;
  /** Bounding box in millimetres; empty only when `triangles` is 0. */
  box: Box;
}
