/**
 * From an uploaded design to the file a machine takes. The job runner calls `preparePrint` once per job;
 * the design is classified from its content, measured against the machine's build volume, sliced when it
 * is not G-code already, and packaged as `.gcode.3mf` for machines that need it.
 *
 * Owned by the slicing work (issue 4); this first version only passes G-code through.
 */

import { open } from 'node:fs/promises';
import { InvalidDesign } from '../errors.js';
import type { PrintFileFormat, Volume } from '../machines/machine.js';
import type { SliceEstimate, SlicerConfig } from './slicer.js';

export type DesignKind = 'stl' | '3mf' | 'obj' | 'gcode';

export interface PrepareRequest {
  /** The uploaded file as it was streamed to disk. */
  uploadPath: string;
  /** The client's file name (a hint only: the content decides the type). */
  fileName: string;
  /** Format the target machine takes. */
  format: PrintFileFormat;
  maxPartVolume: Volume | null;
  /** The machine's slicer; null when the machine has none (then only G-code can be printed). */
  slicer: SlicerConfig | null;
  filamentIndex?: number;
  /** A directory owned by this job; everything written here is removed when the job ends. */
  workDir: string;
  signal?: AbortSignal;
}

export interface PreparedPrint {
  /** Local path of the file in the machine's `format`. */
  filePath: string;
  designKind: DesignKind;
  /** Slicer estimates; null for G-code that was passed through. */
  estimate: SliceEstimate | null;
}

/** Throws `InvalidDesign` for files that are not printable and `SlicingFailed` when the slicer fails. */
export async function preparePrint(request: PrepareRequest): Promise<PreparedPrint> {
  const head = await readHead(request.uploadPath, 512);
  const looksLikeGcode = /^(;|G\d|M\d|T\d)/m.test(head.toString('latin1'));
  if (!looksLikeGcode || request.format !== 'gcode') {
    throw new InvalidDesign(`cannot print ${request.fileName}: only plain G-code is supported so far`);
  }
  return { filePath: request.uploadPath, designKind: 'gcode', estimate: null };
}

async function readHead(path: string, bytes: number): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
