/**
 * From an uploaded design to the file a machine takes. The job runner calls `preparePrint` once per job;
 * the design is classified from its content, measured against the machine's build volume, sliced when it
 * is not G-code already, and packaged as `.gcode.3mf` for machines that need it. Everything written goes
 * into the job's work dir, which the job runner removes when the job ends.
 */

import { appendFile, copyFile, open, symlink } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
import type { DesignInfo, DesignKind } from '../design/inspect.js';
import type { LineScan } from '../design/line-scan.js';
import type { DesignWorkers } from '../design/workers.js';
import { InvalidDesign } from '../errors.js';
import type { PrintFileFormat } from '../machines/machine.js';
import { designRefusal, type MachinePrints } from '../machines/prints.js';
import { readGcodeTrailer } from './estimate.js';
import { type FilamentFigures, NO_FIGURES, readFilamentComments } from './filament-comments.js';
import { PrusaSlicer } from './prusa.js';
import { readSliceInfo } from './slice-info.js';
import type { SliceEstimate, SlicerConfig } from './slicer.js';

export type { DesignKind } from '../design/inspect.js';

export interface PrepareRequest {
  /** The uploaded file as it was streamed to disk. */
  uploadPath: string;
  /** The client's file name (a hint only: the content decides the type). */
  fileName: string;
  /** Format the target machine takes. */
  format: PrintFileFormat;
  /** What the machine can print (machines/prints.ts): the design is refused before anything else is done. */
  prints: MachinePrints;
  /**
   * The machine's slicer. Without one, a design the machine takes (`prints`) is handed over as it is: G-code,
   * or any design for a simulated machine.
   */
  slicer: SlicerConfig | null;
  /** Where designs are measured (worker threads, bounded by the configured limits). */
  designs: DesignWorkers;
  /** The line check the upload stream made (line-scan.ts), if it made one. */
  scannedLines?: LineScan;
  filamentIndex?: number;
  /** `clearing = "gcode"`: the machine's eject snippet, appended to the G-code of every job. */
  ejectGcode?: string | null;
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
  /** What the G-code's comments (or a 3MF's slice info) say about the filament it needs. */
  filament: FilamentFigures;
}

/** Throws `InvalidDesign` for files that are not printable and `SlicingFailed` when the slicer fails. */
export async function preparePrint(request: PrepareRequest): Promise<PreparedPrint> {
  const design = await request.designs.inspect(
    request.uploadPath,
    request.fileName,
    request.signal,
    request.scannedLines,
  );
  request.signal?.throwIfAborted();
  const refused = designRefusal(request.prints, design);
  if (refused) throw new InvalidDesign(`this machine ${refused}`);
  let gcodePath = request.uploadPath;
  let estimate: SliceEstimate | null = null;
  if (design.kind !== 'gcode') {
    // A simulator without a slicer "prints" the design itself.
    if (!request.slicer) {
      const filament = await uploadFilament(request.uploadPath, design.kind);
      return { filePath: request.uploadPath, designKind: design.kind, estimate: null, filament };
    }
    const sliced = await new PrusaSlicer(request.slicer).slice({
      designPath: await slicerInput(request, design),
      outputPath: fileInWorkDir(request.workDir, 'sliced.gcode', request.uploadPath),
      buildVolume: request.prints.maxPartVolume,
      filamentIndex: request.filamentIndex,
      signal: request.signal,
    });
    gcodePath = sliced.gcodePath;
    estimate = sliced.estimate;
  }
  const filament = await readFilamentComments(gcodePath);
  if (request.ejectGcode) gcodePath = await withEjectGcode(gcodePath, request);
  if (request.format === 'gcode.3mf') {
    const packagePath = fileInWorkDir(request.workDir, 'plate.gcode.3mf', request.uploadPath);
    // Loaded here: only Bambu printers take this format, and its zip writer is not needed at start-up.
    const { writeGcode3mf } = await import('./bambu-package.js');
    await writeGcode3mf(gcodePath, packagePath, { estimate, trailer: await readGcodeTrailer(gcodePath) });
    return { filePath: packagePath, designKind: design.kind, estimate, filament };
  }
  return { filePath: gcodePath, designKind: design.kind, estimate, filament };
}

/**
 * What an upload says about its filament before anything is sliced: the comments of G-code, the slice
 * info of a Bambu Studio / OrcaSlicer 3MF; nothing for a mesh.
 */
export async function uploadFilament(path: string, kind: DesignKind): Promise<FilamentFigures> {
  if (kind === 'gcode') return readFilamentComments(path);
  if (kind === '3mf') return readSliceInfo(path);
  return NO_FIGURES;
}

/**
 * The job's G-code followed by the machine's eject snippet (`clearing = "gcode"`). The upload itself is
 * never changed (a queue job keeps it for a requeue): the result is a copy in the work dir, or the
 * slicer's output extended in place.
 */
async function withEjectGcode(gcodePath: string, request: PrepareRequest): Promise<string> {
  let target = gcodePath;
  if (resolve(gcodePath) === resolve(request.uploadPath)) {
    target = fileInWorkDir(request.workDir, 'with-eject.gcode', request.uploadPath);
    await copyFile(gcodePath, target);
  }
  // Starts on a line of its own whatever the file ended with.
  await appendFile(target, `\n; eject_gcode (clearing = "gcode")\n${request.ejectGcode}\n`);
  return target;
}

/**
 * The design as PrusaSlicer can read it. It picks its reader by file extension: hand it the upload itself
 * when its name says the right type, else a link (or copy) under a name that does. A binary STL that
 * PrusaSlicer would mistake for ASCII gets a copy it reads correctly (see `mistakenForAscii`), and a 3MF
 * a copy without the settings that would override the machine's profile (see design/threemf-settings.ts).
 */
async function slicerInput(request: PrepareRequest, design: DesignInfo): Promise<string> {
  const { uploadPath, workDir } = request;
  const { kind } = design;
  const path = fileInWorkDir(workDir, `slicer-input.${kind}`, uploadPath);
  if (kind === '3mf') {
    await request.designs.copy3mf(uploadPath, path, request.signal);
    return path;
  }
  if (design.encoding === 'binary' && (await mistakenForAscii(uploadPath))) {
    await copyFile(uploadPath, path);
    await markFirstTriangle(path);
    return path;
  }
  if (extname(uploadPath).toLowerCase() === `.${kind}`) return uploadPath;
  try {
    await symlink(resolve(uploadPath), path);
  } catch {
    await copyFile(uploadPath, path);
  }
  return path;
}

/** PrusaSlicer 2.5 (admesh) decides "binary" only if one of the 128 bytes after the 80-byte header is > 127. */
const ADMESH_PROBE = { start: 80, length: 128 };
/** Offset of the first triangle's 2-byte attribute word, which slicers ignore. */
const FIRST_ATTRIBUTE_OFFSET = 84 + 48;

/**
 * True for a binary STL whose first bytes are all ASCII-range (zero normals and "round" positive
 * coordinates such as 60.0 do that), which PrusaSlicer would then fail to load as ASCII.
 */
async function mistakenForAscii(path: string): Promise<boolean> {
  const handle = await open(path, 'r');
  try {
    const probe = Buffer.alloc(ADMESH_PROBE.length);
    const { bytesRead } = await handle.read(probe, 0, probe.length, ADMESH_PROBE.start);
    return probe.subarray(0, bytesRead).every((byte) => byte <= 127);
  } finally {
    await handle.close();
  }
}

/** Sets the first triangle's attribute word to 0x8080: geometry unchanged, and PrusaSlicer sees binary. */
async function markFirstTriangle(path: string): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.write(Buffer.from([0x80, 0x80]), 0, 2, FIRST_ATTRIBUTE_OFFSET);
  } finally {
    await handle.close();
  }
}

/** `workDir/name`, or a variant of it when the upload itself already has that path. */
function fileInWorkDir(workDir: string, name: string, uploadPath: string): string {
  const path = join(workDir, name);
  return resolve(path) === resolve(uploadPath) ? join(workDir, `job-${name}`) : path;
}
