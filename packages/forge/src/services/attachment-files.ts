/**
 * Attachment files on disk: `<data-dir>/attachments/<u0>/<u1>/<uuid>` as Gitea lays them out. Uploads
 * stream into `attachments/tmp/` first and are renamed into place only when complete and accepted, so a
 * refused, oversized or interrupted upload never leaves a file where a row could point.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, type ReadStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { SNIFF_BYTES } from './content-types.js';
import type { ServiceContext } from './context.js';

/** The upload exceeded the configured maximum size. */
export class FileTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`attachment exceeds limit ${maxBytes}`);
    this.name = 'FileTooLargeError';
  }
}

/** The upload's leading bytes were refused by the caller's check. */
export class FileRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FileRefusedError';
  }
}

/** The client went away before the upload was complete. */
export class UploadInterruptedError extends Error {
  constructor() {
    super('upload interrupted');
    this.name = 'UploadInterruptedError';
  }
}

function attachmentsRoot(ctx: ServiceContext): string {
  return join(ctx.config.dataDir, 'attachments');
}

function tempDir(ctx: ServiceContext): string {
  return join(attachmentsRoot(ctx), 'tmp');
}

/** Where the file of `uuid` lives (uuids are generated here, never taken from a request). */
export function attachmentPath(ctx: ServiceContext, uuid: string): string {
  return join(attachmentsRoot(ctx), uuid.slice(0, 1), uuid.slice(1, 2), uuid);
}

/** A completely received upload, not yet in place. */
export interface ReceivedFile {
  tempPath: string;
  size: number;
}

/**
 * Streams `source` into a temporary file: at most `maxBytes` bytes, the first SNIFF_BYTES checked by
 * `checkHead` (which throws FileRefusedError to refuse) before more is written. On any failure the
 * temporary file is removed; the source is left readable (not destroyed) so the server can still answer.
 *
 * Long by design: one promise and its stream listeners together, so every way the upload can end (size
 * limit, refused head, source error, client gone) settles it once and removes the temporary file.
 */
export async function receiveUpload(
  ctx: ServiceContext,
  source: Readable,
  options: { maxBytes: number; checkHead: (head: Buffer) => Promise<void> },
): Promise<ReceivedFile> {
  await mkdir(tempDir(ctx), { recursive: true });
  const tempPath = join(tempDir(ctx), randomUUID());
  const out = createWriteStream(tempPath, { flags: 'wx' });
  let size = 0;
  let headChunks: Buffer[] | null = [];
  let headSize = 0;
  let settled = false;

  return new Promise<ReceivedFile>((resolve, reject) => {
    const cleanup = () => {
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onError);
      source.off('close', onClose);
    };
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      cleanup();
      // Keep consuming (and discarding) the rest so the response can still be delivered.
      source.resume();
      // The file may still be opening: unlink only once the stream has closed, or the open would
      // recreate it after the unlink.
      const closed = out.closed
        ? Promise.resolve()
        : new Promise<void>((done) => out.once('close', () => done()));
      out.destroy();
      void closed
        .then(() => unlink(tempPath))
        .catch(() => undefined)
        .finally(() => reject(error));
    };
    const write = (chunk: Buffer) => {
      if (!out.write(chunk)) {
        source.pause();
        out.once('drain', () => {
          if (!settled) source.resume();
        });
      }
    };
    // The head is held back until it is checked, so a refused type writes nothing. Chunks that still
    // arrive while the check runs (a paused stream may deliver what it already had) wait behind it.
    let checking = false;
    let endedWhileChecking = false;
    const checkHeldHead = async (): Promise<void> => {
      const held = Buffer.concat(headChunks ?? []);
      headChunks = null;
      checking = true;
      try {
        await options.checkHead(held.subarray(0, SNIFF_BYTES));
      } catch (error) {
        fail(error as Error);
        return;
      }
      checking = false;
      if (settled) return;
      write(held);
      for (const chunk of waiting.splice(0)) write(chunk);
      if (endedWhileChecking) finish();
      else source.resume();
    };
    const waiting: Buffer[] = [];
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > options.maxBytes) {
        fail(new FileTooLargeError(options.maxBytes));
        return;
      }
      if (checking) {
        waiting.push(chunk);
        return;
      }
      if (headChunks) {
        headChunks.push(chunk);
        headSize += chunk.length;
        if (headSize < SNIFF_BYTES) return;
        source.pause();
        void checkHeldHead();
        return;
      }
      write(chunk);
    };
    const finish = () => {
      if (settled) return;
      settled = true;
      cleanup();
      out.end();
    };
    const onEnd = () => {
      if (checking) {
        endedWhileChecking = true;
        return;
      }
      if (headChunks) {
        endedWhileChecking = true;
        void checkHeldHead();
        return;
      }
      finish();
    };
    const onError = () => fail(new UploadInterruptedError());
    const onClose = () => {
      // 'close' before 'end' means the client went away mid-upload.
      if (!source.readableEnded) fail(new UploadInterruptedError());
    };
    out.on('error', (error) => {
      if (!settled) fail(error);
      else if (!out.writableFinished) {
        unlink(tempPath).catch(() => undefined);
        reject(error);
      }
    });
    out.on('finish', () => resolve({ tempPath, size }));
    source.on('data', onData);
    source.on('end', onEnd);
    source.on('error', onError);
    source.on('close', onClose);
    // A client that went away before we started listening has already had its 'close'.
    if (source.destroyed && !source.readableEnded) {
      fail(new UploadInterruptedError());
      return;
    }
    source.resume();
  });
}

/** Moves a received file to the place of a new uuid and returns the uuid. */
export async function placeUpload(ctx: ServiceContext, received: ReceivedFile): Promise<string> {
  const uuid = randomUUID();
  const target = attachmentPath(ctx, uuid);
  try {
    await mkdir(join(target, '..'), { recursive: true });
    await rename(received.tempPath, target);
  } catch (error) {
    await unlink(received.tempPath).catch(() => undefined);
    throw error;
  }
  return uuid;
}

/** Removes the files of these uuids; missing files are fine (a crash may have removed them already). */
export async function removeAttachmentFiles(ctx: ServiceContext, uuids: readonly string[]): Promise<void> {
  await Promise.all(uuids.map((uuid) => rm(attachmentPath(ctx, uuid), { force: true })));
}

/** Opens the file of `uuid` for serving: its size, its first bytes and a stream of all of it. */
export async function openAttachmentFile(
  ctx: ServiceContext,
  uuid: string,
): Promise<{ size: number; head: Buffer; stream: () => ReadStream }> {
  const path = attachmentPath(ctx, uuid);
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const head = Buffer.alloc(Math.min(size, SNIFF_BYTES));
    if (head.length > 0) await handle.read(head, 0, head.length, 0);
    return { size, head, stream: () => createReadStream(path) };
  } finally {
    await handle.close();
  }
}

/** Temporary uploads older than this at start-up were cut off by a crash or a restart. */
const STALE_UPLOAD_MS = 60 * 60 * 1000;

/**
 * Removes temporary uploads left by a crash. Only old ones: another forge process sharing the data
 * directory may be receiving an upload right now.
 */
export async function removeStaleUploads(ctx: ServiceContext): Promise<void> {
  let names: string[];
  try {
    names = await readdir(tempDir(ctx));
  } catch {
    return;
  }
  const now = Date.now();
  for (const name of names) {
    const path = join(tempDir(ctx), name);
    const info = await stat(path).catch(() => null);
    if (info && now - info.mtimeMs > STALE_UPLOAD_MS) await rm(path, { force: true });
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Uuids of the placed attachment files last modified before `olderThanMs` (epoch ms). */
export async function listPlacedFiles(ctx: ServiceContext, olderThanMs: number): Promise<string[]> {
  const root = attachmentsRoot(ctx);
  const uuids: string[] = [];
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isFile() || !UUID.test(entry.name)) continue;
    const path = attachmentPath(ctx, entry.name);
    // Only files exactly where their uuid puts them (temporary uploads have their own sweep).
    if (join(entry.parentPath, entry.name) !== path) continue;
    const info = await stat(path).catch(() => null);
    if (info && info.mtimeMs < olderThanMs) uuids.push(entry.name);
  }
  return uuids;
}
