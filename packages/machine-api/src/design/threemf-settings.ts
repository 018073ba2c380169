/**
 * PrusaSlicer applies the print/printer settings a 3MF project carries wherever the machine's profile
 * leaves a key unset, custom G-code included (`before_layer_gcode`, per-height custom G-code). An upload
 * must not program the machine, so the slicer gets a copy of the 3MF without those parts. Per-object
 * settings and volume types (modifiers, negative volumes) stay: they shape the part, not the machine.
 * Only what the slicer reads is copied (model parts, relationships, text metadata); thumbnails and
 * attachments are never inflated, and the archive is held to the same limits as when it was measured.
 */

import { InvalidDesign, ServiceError } from '../errors.js';
import type { DesignLimits } from './limits.js';
import { isModelPart } from './threemf.js';
import { checkZipLimits, openZip } from './zip-archive.js';
import { ZipFileWriter } from './zip-writer.js';

/** Parts (lower-cased) that carry machine settings or G-code. */
const SETTINGS_PARTS = new Set([
  'metadata/slic3r_pe.config',
  'metadata/prusa_slicer_custom_gcode_per_print_z.xml',
  'metadata/project_settings.config',
]);

/** Entries the slicer reads besides model parts: package structure and text metadata. */
function isCopied(name: string): boolean {
  const lower = name.toLowerCase();
  if (SETTINGS_PARTS.has(lower) || lower.endsWith('/')) return false;
  if (isModelPart(lower) || lower === '[content_types].xml' || lower.endsWith('.rels')) return true;
  return lower.startsWith('metadata/') && /\.(config|xml|txt)$/.test(lower);
}

/** Streams `source` to `target` without the 3MF parts that would override the machine's profile. */
export async function copy3mfWithoutSettings(
  source: string,
  target: string,
  limits: DesignLimits,
): Promise<void> {
  const archive = await openZip(source);
  const zip = new ZipFileWriter(target);
  try {
    checkZipLimits(archive, limits);
    for (const entry of archive.entries) {
      if (isCopied(entry.name)) zip.stream(entry.name, () => archive.open(entry));
    }
    await zip.close();
  } catch (error) {
    await zip.discard();
    // A text entry that inflates beyond its declared size is the archive's fault, not ours.
    throw error instanceof ServiceError
      ? error
      : new InvalidDesign(`3MF archive is truncated or corrupt: ${(error as Error).message}`);
  } finally {
    archive.close();
  }
}
