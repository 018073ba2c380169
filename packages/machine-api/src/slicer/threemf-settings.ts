/**
 * PrusaSlicer applies the print/printer settings a 3MF project carries wherever the machine's profile
 * leaves a key unset, custom G-code included (`before_layer_gcode`, per-height custom G-code). An upload
 * must not program the machine, so the slicer gets a copy of the 3MF without those parts. Per-object
 * settings and volume types (modifiers, negative volumes) stay: they shape the part, not the machine.
 */

import { createReadStream } from 'node:fs';
import { Unzip, UnzipInflate } from 'fflate';
import { InvalidDesign } from '../errors.js';
import { ZipFileWriter } from './zip-writer.js';

/** Parts (lower-cased) that carry machine settings or G-code. */
const SETTINGS_PARTS = new Set([
  'metadata/slic3r_pe.config',
  'metadata/prusa_slicer_custom_gcode_per_print_z.xml',
  'metadata/project_settings.config',
]);

/** Streams `source` to `target` without the 3MF parts that would override the machine's profile. */
export async function copy3mfWithoutSettings(source: string, target: string): Promise<void> {
  const zip = new ZipFileWriter(target);
  const unzip = new Unzip((file) => {
    const name = file.name.replace(/^\/+/, '');
    if (name.endsWith('/') || SETTINGS_PARTS.has(name.toLowerCase())) return;
    const entry = zip.entry(name);
    file.ondata = (error, chunk, final) => {
      if (error) zip.fail(new InvalidDesign(`3MF archive is corrupt (${file.name}): ${error.message}`));
      else entry.push(chunk, final);
    };
    file.start();
  });
  unzip.register(UnzipInflate);
  try {
    for await (const chunk of createReadStream(source, { highWaterMark: 1 << 20 })) {
      unzip.push(chunk as Buffer);
      await zip.flush();
    }
    unzip.push(new Uint8Array(0), true);
    await zip.close();
  } catch (error) {
    await zip.discard();
    throw error;
  }
}
