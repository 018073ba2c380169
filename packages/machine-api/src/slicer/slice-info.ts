/**
 * The filament a Bambu Studio / OrcaSlicer 3MF was sliced to use: its `Metadata/slice_info.config`
 * (XML) lists per plate `<filament id type color used_m used_g/>`. The first plate is the one printed. The
 * entry is read through the project's zip reader (design/zip-archive.ts) and parsed as a stream by saxes,
 * at most `MAX_ENTRY_BYTES`; a file without it, or one that is not a readable zip, has no figures.
 */

import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { openZip } from '../design/zip-archive.js';
import { type FilamentFigures, NO_FIGURES } from './filament-comments.js';

const ENTRY = 'Metadata/slice_info.config';
/** Real slice_info files are a few kB. */
const MAX_ENTRY_BYTES = 1024 * 1024;
const BOUNDS = { grams: 100_000, metres: 100_000 };
const PLAIN_NUMBER = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

export async function readSliceInfo(path: string): Promise<FilamentFigures> {
  let archive: Awaited<ReturnType<typeof openZip>>;
  try {
    archive = await openZip(path);
  } catch {
    return NO_FIGURES;
  }
  try {
    const entry = archive.entries.find((e) => e.name === ENTRY);
    if (!entry || entry.uncompressedSize > MAX_ENTRY_BYTES) return NO_FIGURES;
    const stream = await archive.open(entry);
    const parser = new SaxesParser({ xmlns: false });
    let plates = 0;
    let grams: number | null = 0;
    let metres: number | null = 0;
    let material: string | null = null;
    parser.on('opentag', (tag: SaxesTagPlain) => {
      if (tag.name === 'plate') plates++;
      if (tag.name !== 'filament' || plates !== 1) return;
      grams = add(grams, tag.attributes.used_g, BOUNDS.grams);
      metres = add(metres, tag.attributes.used_m, BOUNDS.metres);
      const type = String(tag.attributes.type ?? '').toLowerCase();
      if (material === null && /^[a-z0-9_+-]{1,32}$/.test(type)) material = type;
    });
    const decoder = new TextDecoder();
    for await (const chunk of stream) parser.write(decoder.decode(chunk as Buffer, { stream: true }));
    parser.write(decoder.decode());
    parser.close();
    if (plates === 0) return NO_FIGURES;
    const m = metres as number | null;
    return {
      ...NO_FIGURES,
      grams: grams !== null && grams > 0 ? grams : null,
      millimetres: m !== null && m > 0 ? m * 1000 : null,
      material,
    };
  } catch {
    // Not well-formed XML, a truncated entry: the file says nothing usable about its filament.
    return NO_FIGURES;
  } finally {
    archive.close();
  }
}

/** Adds one attribute's value to a running total; an implausible value makes the total unknown. */
function add(total: number | null, value: unknown, bound: number): number | null {
  if (total === null || value === undefined) return total;
  const text = String(value).trim();
  if (!PLAIN_NUMBER.test(text)) return null;
  const sum = total + Number(text);
  return Number.isFinite(sum) && sum <= bound ? sum : null;
}
