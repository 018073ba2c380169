/** Axis-aligned bounding boxes, grown one point at a time while a design file streams by. */

import type { Volume } from '../machines/machine.js';

export interface Box {
  minX: number;
  minY: number;
  minZ: number;
  maxX: number;
  maxY: number;
  maxZ: number;
}

/** A box that contains nothing yet; the first `growBox` call makes it a point. */
export function emptyBox(): Box {
  return {
    minX: Infinity,
    minY: Infinity,
    minZ: Infinity,
    maxX: -Infinity,
    maxY: -Infinity,
    maxZ: -Infinity,
  };
}

export function isEmptyBox(box: Box): boolean {
  return !(box.minX <= box.maxX && box.minY <= box.maxY && box.minZ <= box.maxZ);
}

/** Extends `box` so that it contains the point. */
export function growBox(box: Box, x: number, y: number, z: number): void {
  if (x < box.minX) box.minX = x;
  if (x > box.maxX) box.maxX = x;
  if (y < box.minY) box.minY = y;
  if (y > box.maxY) box.maxY = y;
  if (z < box.minZ) box.minZ = z;
  if (z > box.maxZ) box.maxZ = z;
}

/** Extends `box` so that it contains `other`. */
export function mergeBox(box: Box, other: Box): void {
  if (isEmptyBox(other)) return;
  growBox(box, other.minX, other.minY, other.minZ);
  growBox(box, other.maxX, other.maxY, other.maxZ);
}

/** Width (X), depth (Y) and height (Z) of a non-empty box. */
export function boxSize(box: Box): Volume {
  return { width: box.maxX - box.minX, depth: box.maxY - box.minY, height: box.maxZ - box.minZ };
}
