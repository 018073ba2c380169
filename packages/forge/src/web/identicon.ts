/**
 * Identicons the way Gitea draws its generated avatars (modules/avatar/identicon): a SHA-256 of the seed
 * picks a centre shape, two edge shapes with their starting rotations and one dark foreground colour;
 * the shapes fill a 3×3 grid on white, the edge shapes turning a quarter at each step around the
 * centre, and the left half is mirrored onto the right. The shapes and palette here are this forge's own.
 */
import { createHash } from 'node:crypto';
import { PNG } from 'pngjs';

/** A shape as polygons in a unit square (0…1 on both axes, y downwards). */
type Shape = readonly (readonly [number, number])[][];

const SQUARE: [number, number][] = [
  [0, 0],
  [1, 0],
  [1, 1],
  [0, 1],
];

/** Edge shapes; the first few are calm enough for the centre too. */
const SHAPES: readonly Shape[] = [
  [], // empty
  [SQUARE], // full
  [
    [
      [0.25, 0.25],
      [0.75, 0.25],
      [0.75, 0.75],
      [0.25, 0.75],
    ],
  ], // small square
  [
    [
      [0.5, 0],
      [1, 0.5],
      [0.5, 1],
      [0, 0.5],
    ],
  ], // diamond
  [
    [
      [0, 0],
      [1, 0],
      [0, 1],
    ],
  ], // corner triangle
  [
    [
      [0.5, 0],
      [1, 1],
      [0, 1],
    ],
  ], // peak
  [
    [
      [0, 0],
      [0.5, 0],
      [0.5, 1],
      [0, 1],
    ],
  ], // half
  [
    [
      [0, 0],
      [1, 0.5],
      [1, 1],
      [0.5, 1],
    ],
  ], // slanted cone
  [
    [
      [0, 0],
      [0.5, 0],
      [0.5, 0.5],
      [0, 0.5],
    ],
  ], // quarter
  [
    [
      [0, 0.5],
      [1, 0.5],
      [0.5, 1],
    ],
  ], // lower wedge
  [
    [
      [0.5, 0],
      [1, 0.5],
      [0, 0.5],
    ],
    [
      [0.5, 0.5],
      [1, 1],
      [0, 1],
    ],
  ], // stacked peaks
  [
    [
      [0, 0],
      [0.5, 0],
      [0, 0.5],
    ],
    [
      [0.75, 0.75],
      [1, 0.75],
      [1, 1],
      [0.75, 1],
    ],
  ], // notch and dot
  [
    [
      [0, 0],
      [0.5, 0],
      [0, 0.5],
    ],
    [
      [1, 0],
      [1, 0.5],
      [0.5, 0],
    ],
    [
      [1, 1],
      [0.5, 1],
      [1, 0.5],
    ],
    [
      [0, 1],
      [0, 0.5],
      [0.5, 1],
    ],
  ], // four corners
  [
    [
      [0.25, 0],
      [0.5, 0.5],
      [0.25, 1],
      [0, 0.5],
    ],
    [
      [0.75, 0],
      [1, 0.5],
      [0.75, 1],
      [0.5, 0.5],
    ],
  ], // twin diamonds
  [
    [
      [0, 0],
      [1, 0.25],
      [0.25, 1],
    ],
  ], // kite
  [
    [
      [0.5, 0],
      [0.5, 0.5],
      [0, 0.5],
    ],
  ], // small wedge
];
/** Shapes allowed in the centre cell (symmetric ones, so the centre stays balanced). */
const CENTRE_SHAPES: readonly number[] = [0, 1, 2, 3, 12, 13];

/** Web-safe colours (00/33/66/99/cc per channel, no ff) that stand out on white: not too dark or grey. */
const PALETTE: readonly [number, number, number][] = (() => {
  const levels = [0x00, 0x33, 0x66, 0x99, 0xcc];
  const colours: [number, number, number][] = [];
  for (const r of levels)
    for (const g of levels)
      for (const b of levels) {
        const brightest = Math.max(r, g, b);
        if (brightest >= 0x99 || (brightest === 0x66 && Math.min(r, g, b) < 0x66)) colours.push([r, g, b]);
      }
  return colours;
})();

export const MIN_IDENTICON_SIZE = 16;

/** Even-odd rule: is (x, y) inside the polygon? */
function inside(x: number, y: number, polygon: readonly (readonly [number, number])[]): boolean {
  let result = false;
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    const [xi, yi] = polygon[i]!;
    const [xj, yj] = polygon[j]!;
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) result = !result;
  }
  return result;
}

/** Quarter turns clockwise about the cell's centre. */
function rotate(x: number, y: number, turns: number): [number, number] {
  switch (turns % 4) {
    case 1:
      return [1 - y, x];
    case 2:
      return [1 - x, 1 - y];
    case 3:
      return [y, 1 - x];
    default:
      return [x, y];
  }
}

/**
 * The identicon of `seed` as a `size`×`size` PNG. Deterministic: the same seed and size always give the
 * same bytes.
 */
export function identiconPng(seed: string, size: number): Buffer {
  const sum = createHash('sha256').update(seed).digest();
  // Byte sums wrap as in Go, where the hash bytes are added as uint8.
  const byteSum = (...indexes: number[]) => indexes.reduce((total, i) => total + sum[i]!, 0) & 0xff;
  const edge1 = byteSum(0, 1, 2) % SHAPES.length;
  const edge2 = byteSum(3, 4, 5) % SHAPES.length;
  const centre = CENTRE_SHAPES[byteSum(6, 7, 8) % CENTRE_SHAPES.length]!;
  let turns1 = byteSum(9, 10) % 4;
  let turns2 = byteSum(11, 12) % 4;
  const [red, green, blue] = PALETTE[byteSum(11, 12, 15) % PALETTE.length]!;

  const cell = Math.floor(size / 3);
  const padding = Math.floor((size % 3) / 2);
  const filled = new Uint8Array(size * size);
  const fill = (shapeIndex: number, column: number, row: number, turns: number) => {
    const shape = SHAPES[shapeIndex]!;
    if (shape.length === 0) return;
    const left = padding + column * cell;
    const top = padding + row * cell;
    for (let j = 0; j < cell; j++) {
      for (let i = 0; i < cell; i++) {
        // Sample the pixel's centre, turned back into the shape's own orientation.
        const [u, v] = rotate((i + 0.5) / cell, (j + 0.5) / cell, (4 - (turns % 4)) % 4);
        if (shape.some((polygon) => inside(u, v, polygon))) filled[(top + j) * size + left + i] = 1;
      }
    }
  };
  fill(centre, 1, 1, 0);
  // Around the centre, clockwise from the top-left; the right column comes from the mirror below.
  fill(edge1, 0, 0, turns1);
  fill(edge2, 1, 0, turns2);
  turns1 += 2;
  turns2 += 2;
  fill(edge2, 1, 2, turns2);
  turns1 += 1;
  turns2 += 1;
  fill(edge1, 0, 2, turns1);
  fill(edge2, 0, 1, turns2);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < Math.floor(size / 2); x++) filled[y * size + (size - 1 - x)] = filled[y * size + x]!;
  }

  const png = new PNG({ width: size, height: size, colorType: 2 });
  for (let p = 0; p < size * size; p++) {
    const on = filled[p] === 1;
    png.data[p * 4] = on ? red : 0xff;
    png.data[p * 4 + 1] = on ? green : 0xff;
    png.data[p * 4 + 2] = on ? blue : 0xff;
    png.data[p * 4 + 3] = 0xff;
  }
  return PNG.sync.write(png, { colorType: 2 });
}
