/**
 * 3MF measuring. A 3MF is a zip whose root model part `3D/3dmodel.model` (XML) holds `<object>`s with a
 * `<mesh>` (vertices, triangles) or `<components>` (other objects under a transform), and a `<build>` of
 * `<item>`s placing objects on the plate. The zip is read through its central directory (zip-archive.ts),
 * only model parts are inflated and their XML parsed as streams, so only the per-object bounding boxes
 * are kept. Objects in other model parts (the production extension's `p:path`,
 * used by Bambu Studio projects) are measured the same way.
 */

import type { Readable } from 'node:stream';
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { InvalidDesign } from '../errors.js';
import { type Box, emptyBox, growBox, isEmptyBox, mergeBox } from './box.js';
import { beyondLimit, type DesignLimits } from './limits.js';
import type { Measurement } from './measurement.js';
import { checkZipLimits, openZip } from './zip-archive.js';

export const ROOT_MODEL_PART = '3D/3dmodel.model';

/** Row-major 3×4 affine transform as 3MF writes it: `m00 m01 m02 m10 m11 m12 m20 m21 m22 m30 m31 m32`. */
type Transform = number[];

interface Component {
  part: string;
  objectId: string;
  transform: Transform | null;
}

interface ModelObject {
  mesh: Box;
  triangles: number;
  components: Component[];
}

interface ModelPart {
  unitScale: number;
  objects: Map<string, ModelObject>;
  items: Component[];
}

/** Millimetres per model unit (3MF core spec, `unit` attribute of `<model>`). */
const UNIT_SCALE: Record<string, number> = {
  micron: 0.001,
  millimeter: 1,
  centimeter: 10,
  inch: 25.4,
  foot: 304.8,
  meter: 1000,
};

/** Running totals over every model part, checked against the limits as the XML streams by. */
interface Counts {
  triangles: number;
  vertices: number;
}

/** True for the entries that hold meshes: `3D/3dmodel.model` and the production extension's other parts. */
export function isModelPart(name: string): boolean {
  const lower = name.toLowerCase();
  return lower.startsWith('3d/') && lower.endsWith('.model');
}

/** Measures the build of a 3MF: the union of its build items, in millimetres. */
export async function measure3mf(path: string, limits: DesignLimits): Promise<Measurement> {
  const parts = await readModelParts(path, limits);
  const root = parts.get(ROOT_MODEL_PART.toLowerCase());
  if (!root) {
    throw new InvalidDesign(`zip archive is not a 3MF: it has no ${ROOT_MODEL_PART} part`);
  }
  const box = emptyBox();
  let triangles = 0;
  for (const item of root.items) {
    const placed = objectBox(parts, item, 0);
    triangles += placed.triangles;
    mergeBox(box, placed.box);
  }
  if (triangles === 0) throw new InvalidDesign('3MF build contains no triangles');
  return { triangles, box: scaleBox(box, root.unitScale) };
}

/** Parses every model part; other entries (thumbnails, settings, attachments) are never inflated. */
async function readModelParts(path: string, limits: DesignLimits): Promise<Map<string, ModelPart>> {
  const archive = await openZip(path);
  try {
    checkZipLimits(archive, limits);
    const parts = new Map<string, ModelPart>();
    const counts: Counts = { triangles: 0, vertices: 0 };
    for (const entry of archive.entries) {
      if (!isModelPart(entry.name)) continue;
      const name = entry.name.toLowerCase();
      const part: ModelPart = { unitScale: 1, objects: new Map(), items: [] };
      parts.set(name, part);
      await parsePart(
        await archive.open(entry),
        entry.name,
        modelParser(`/${name}`, part, counts, limits),
        limits,
      );
    }
    return parts;
  } finally {
    archive.close();
  }
}

const LESS_THAN = 0x3c;

/**
 * Streams one model part into its parser. Between two `<` there is one tag or one text run; neither may
 * exceed `maxLineBytes`, which bounds every string the XML parser builds (a part of nothing but
 * whitespace, or one endless attribute, is refused after that many bytes).
 */
async function parsePart(stream: Readable, entryName: string, parser: SaxesParser, limits: DesignLimits) {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let sinceTag = 0;
  try {
    for await (const data of stream) {
      const chunk = data as Buffer;
      let from = 0;
      for (let at = chunk.indexOf(LESS_THAN); at !== -1; at = chunk.indexOf(LESS_THAN, at + 1)) {
        if (sinceTag + (at - from) > limits.maxLineBytes) break;
        sinceTag = 0;
        from = at;
      }
      sinceTag += chunk.length - from;
      if (sinceTag > limits.maxLineBytes) {
        throw beyondLimit(limits, 'maxLineBytes', `3MF part ${entryName} has a tag or text run longer than`);
      }
      parser.write(decoder.decode(chunk, { stream: true }));
    }
    parser.write(decoder.decode());
    parser.close();
  } catch (caught) {
    stream.destroy();
    throw caught instanceof InvalidDesign ? caught : asInvalid(entryName, caught);
  }
}

function asInvalid(partName: string, caught: unknown): InvalidDesign {
  const reason = caught instanceof Error ? caught.message : String(caught);
  return new InvalidDesign(`3MF part ${partName} is not valid: ${reason.split('\n')[0]}`);
}

/** A SAX parser filling `part` from the XML of one model part named `partPath`. */
function modelParser(partPath: string, part: ModelPart, counts: Counts, limits: DesignLimits): SaxesParser {
  const parser = new SaxesParser({ xmlns: false, position: true });
  let current: ModelObject | null = null;
  parser.on('opentag', (tag: SaxesTagPlain) => {
    const attributes = tag.attributes;
    switch (localName(tag.name)) {
      case 'model': {
        const unit = attributes.unit ?? 'millimeter';
        const scale = UNIT_SCALE[unit];
        if (scale === undefined) throw new Error(`unknown unit "${unit}"`);
        part.unitScale = scale;
        break;
      }
      case 'object': {
        current = { mesh: emptyBox(), triangles: 0, components: [] };
        part.objects.set(requireAttribute(attributes, 'id', tag.name), current);
        break;
      }
      case 'vertex': {
        const x = Number(attributes.x);
        const y = Number(attributes.y);
        const z = Number(attributes.z);
        if (!Number.isFinite(x) || !Number.isFinite(y) || !Number.isFinite(z)) {
          throw new Error(`a vertex near line ${parser.line} does not have numeric x, y and z`);
        }
        if (current) growBox(current.mesh, x, y, z);
        if (++counts.vertices > limits.maxVertices) {
          throw beyondLimit(limits, 'maxVertices', '3MF model has more vertices than');
        }
        break;
      }
      case 'triangle':
        if (current) current.triangles++;
        if (++counts.triangles > limits.maxTriangles) {
          throw beyondLimit(limits, 'maxTriangles', '3MF model has more triangles than');
        }
        break;
      case 'component':
        current?.components.push(reference(attributes, partPath, tag.name));
        break;
      case 'item':
        part.items.push(reference(attributes, partPath, tag.name));
        break;
    }
  });
  parser.on('closetag', (tag: SaxesTagPlain) => {
    if (localName(tag.name) === 'object') current = null;
  });
  return parser;
}

function reference(attributes: Record<string, string>, partPath: string, tagName: string): Component {
  const path = Object.entries(attributes).find(([key]) => localName(key) === 'path')?.[1];
  return {
    part: (path ?? partPath).replace(/^\/+/, '').toLowerCase(),
    objectId: requireAttribute(attributes, 'objectid', tagName),
    transform: attributes.transform ? parseTransform(attributes.transform) : null,
  };
}

function requireAttribute(attributes: Record<string, string>, name: string, tagName: string): string {
  const value = attributes[name];
  if (value === undefined) throw new Error(`<${tagName}> has no ${name} attribute`);
  return value;
}

function parseTransform(text: string): Transform {
  const values = text.trim().split(/\s+/).map(Number);
  if (values.length !== 12 || values.some((v) => !Number.isFinite(v))) {
    throw new Error(`transform "${text}" is not 12 numbers`);
  }
  return values;
}

function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon === -1 ? name : name.slice(colon + 1);
}

const MAX_COMPONENT_DEPTH = 32;

/**
 * Box of an object placed by `ref`, in the referring part's coordinates. Rotated boxes are bounded by
 * their transformed corners, which can only overestimate, never hide a part that is too big.
 */
function objectBox(
  parts: Map<string, ModelPart>,
  ref: Component,
  depth: number,
): { box: Box; triangles: number } {
  if (depth > MAX_COMPONENT_DEPTH) throw new InvalidDesign('3MF components nest too deeply (a cycle?)');
  const object = parts.get(ref.part)?.objects.get(ref.objectId);
  if (!object) {
    throw new InvalidDesign(`3MF refers to object ${ref.objectId} in /${ref.part}, which does not exist`);
  }
  const box = emptyBox();
  mergeBox(box, object.mesh);
  let triangles = object.triangles;
  for (const component of object.components) {
    const inner = objectBox(parts, component, depth + 1);
    triangles += inner.triangles;
    mergeBox(box, inner.box);
  }
  return { box: ref.transform ? transformBox(box, ref.transform) : box, triangles };
}

function transformBox(box: Box, m: Transform): Box {
  if (isEmptyBox(box)) return box;
  const out = emptyBox();
  for (const x of [box.minX, box.maxX]) {
    for (const y of [box.minY, box.maxY]) {
      for (const z of [box.minZ, box.maxZ]) {
        growBox(
          out,
          x * m[0]! + y * m[3]! + z * m[6]! + m[9]!,
          x * m[1]! + y * m[4]! + z * m[7]! + m[10]!,
          x * m[2]! + y * m[5]! + z * m[8]! + m[11]!,
        );
      }
    }
  }
  return out;
}

function scaleBox(box: Box, scale: number): Box {
  if (scale === 1) return box;
  return {
    minX: box.minX * scale,
    minY: box.minY * scale,
    minZ: box.minZ * scale,
    maxX: box.maxX * scale,
    maxY: box.maxY * scale,
    maxZ: box.maxZ * scale,
  };
}
