/**
 * Bounds on what measuring a design may cost. Every design is untrusted: a small upload can claim (or
 * inflate to) gigabytes, one line can be the whole file, a tiny 3MF can hold millions of triangles. Each
 * limit is a `[server]` key; a design beyond one is refused with `InvalidDesign` naming the key.
 */

import { InvalidDesign } from '../errors.js';

export interface DesignLimits {
  /** Longest line of a text design (ASCII STL, OBJ, G-code), and longest run of 3MF XML between two tags. */
  maxLineBytes: number;
  /** Sum of the uncompressed sizes of every entry of a 3MF archive. */
  max3mfUncompressedBytes: number;
  /** Uncompressed size ÷ compressed size, of the archive and of each sizeable entry. */
  max3mfCompressionRatio: number;
  /** Triangles (STL, 3MF) or triangulated faces (OBJ) of one design. */
  maxTriangles: number;
  /** Vertices of an indexed mesh (3MF, OBJ). */
  maxVertices: number;
}

export const DEFAULT_DESIGN_LIMITS: DesignLimits = {
  maxLineBytes: 1024 * 1024,
  max3mfUncompressedBytes: 1024 * 1024 * 1024,
  max3mfCompressionRatio: 100,
  maxTriangles: 5_000_000,
  maxVertices: 5_000_000,
};

/** The `[server]` key of each limit, named in every refusal so the operator knows what to raise. */
export const LIMIT_KEYS: Record<keyof DesignLimits, string> = {
  maxLineBytes: 'max_line_bytes',
  max3mfUncompressedBytes: 'max_3mf_uncompressed_mib',
  max3mfCompressionRatio: 'max_3mf_compression_ratio',
  maxTriangles: 'max_triangles',
  maxVertices: 'max_vertices',
};

/** `InvalidDesign` for a design beyond `limit`; `what` says what was too much, e.g. "line 3 is longer than". */
export function beyondLimit(limits: DesignLimits, limit: keyof DesignLimits, what: string): InvalidDesign {
  const value = limits[limit];
  const shown = limit === 'max3mfUncompressedBytes' ? `${value / (1024 * 1024)} MiB` : String(value);
  return new InvalidDesign(`${what} ${shown}, the limit set by [server] ${LIMIT_KEYS[limit]}`);
}
