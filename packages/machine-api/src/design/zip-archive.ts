/**
 * Reading a 3MF's zip through its central directory (yauzl): the list of entries and their declared sizes
 * come without inflating anything, so limits are checked before any work, entries nobody needs are never
 * inflated, and an entry that inflates beyond its declared size is an error (yauzl checks while
 * streaming), so a lying header cannot get past the limits either.
 */

import type { Readable } from 'node:stream';
import yauzl from 'yauzl';
import { InvalidDesign } from '../errors.js';
import { beyondLimit, type DesignLimits } from './limits.js';

export interface ZipEntryInfo {
  /** As stored, with any leading slash removed. */
  name: string;
  compressedSize: number;
  uncompressedSize: number;
}

export interface ZipArchive {
  entries: ZipEntryInfo[];
  /** Inflates one entry as a stream; never more than its declared size. */
  open(entry: ZipEntryInfo): Promise<Readable>;
  close(): void;
}

/** Entries smaller than this are not held to the compression ratio (tiny XML compresses well). */
const RATIO_FLOOR_BYTES = 1024 * 1024;

/** Opens the archive at `path`; throws `InvalidDesign` when it is not a readable zip. */
export async function openZip(path: string): Promise<ZipArchive> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true, autoClose: false }, (error, opened) =>
      error ? reject(corrupt(error)) : resolve(opened),
    );
  });
  const byName = new Map<string, yauzl.Entry>();
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (entry: yauzl.Entry) => {
        byName.set(entry.fileName.replace(/^\/+/, ''), entry);
        zip.readEntry();
      });
      zip.once('end', () => resolve());
      zip.once('error', (error: Error) => reject(corrupt(error)));
      zip.readEntry();
    });
  } catch (error) {
    zip.close();
    throw error;
  }
  const entries = [...byName.entries()].map(([name, entry]) => ({
    name,
    compressedSize: entry.compressedSize,
    uncompressedSize: entry.uncompressedSize,
  }));
  return {
    entries,
    open: (info) =>
      new Promise<Readable>((resolve, reject) => {
        const entry = byName.get(info.name);
        if (!entry) return reject(new InvalidDesign(`3MF archive has no entry ${info.name}`));
        zip.openReadStream(entry, (error, stream) => (error ? reject(corrupt(error)) : resolve(stream)));
      }),
    close: () => zip.close(),
  };
}

/** Refuses an archive whose declared sizes exceed the limits: a zip bomb by size or by ratio. */
export function checkZipLimits(archive: ZipArchive, limits: DesignLimits): void {
  let compressed = 0;
  let uncompressed = 0;
  for (const entry of archive.entries) {
    compressed += entry.compressedSize;
    uncompressed += entry.uncompressedSize;
    if (uncompressed > limits.max3mfUncompressedBytes) {
      throw beyondLimit(
        limits,
        'max3mfUncompressedBytes',
        `3MF archive inflates to more than ${mib(uncompressed)} (entry ${entry.name} alone is ${mib(entry.uncompressedSize)}), over`,
      );
    }
    if (
      entry.uncompressedSize > RATIO_FLOOR_BYTES &&
      entry.uncompressedSize > entry.compressedSize * limits.max3mfCompressionRatio
    ) {
      throw beyondLimit(
        limits,
        'max3mfCompressionRatio',
        `3MF entry ${entry.name} inflates ${ratio(entry.uncompressedSize, entry.compressedSize)} times its stored size, more than`,
      );
    }
  }
  if (uncompressed > RATIO_FLOOR_BYTES && uncompressed > compressed * limits.max3mfCompressionRatio) {
    throw beyondLimit(
      limits,
      'max3mfCompressionRatio',
      `3MF archive inflates ${ratio(uncompressed, compressed)} times its stored size, more than`,
    );
  }
}

function mib(bytes: number): string {
  return `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MiB`;
}

function ratio(uncompressed: number, compressed: number): string {
  return compressed === 0 ? 'infinitely many' : String(Math.round(uncompressed / compressed));
}

/** yauzl's errors (bad signature, truncated directory, size mismatch) as a design problem. */
function corrupt(error: Error): InvalidDesign {
  return new InvalidDesign(`3MF archive is truncated or corrupt: ${error.message}`);
}
