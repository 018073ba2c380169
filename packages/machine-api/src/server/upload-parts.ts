/**
 * The part loop both multipart upload forms share (`POST /print`, `POST /queue` and OctoPrint's
 * `POST api/files/local`): the one `file` part is streamed with back-pressure straight to a new temp file
 * (never held in memory, capped by the parser's `fileSize` limit), file parts under any other name are
 * drained, and every field goes to the caller. The forms keep their own field rules and error messages.
 */

import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { MultipartValue } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { LineLengthScan } from '../design/line-scan.js';
import { BadRequest } from '../errors.js';
import type { Upload } from '../jobs/runner.js';

/**
 * What the file writer may hold before it pushes back. At the default 16 KiB every 64 KiB the parser hands
 * on overran it, so each chunk paused and resumed the whole chain back to the socket and went to disk as a
 * write of its own. At 1 MiB the chain keeps flowing and what arrives while a write is under way goes in
 * the next single call: about half the service's CPU per 100 MB upload (bench/results/m-busy-2026-11-24c.md).
 * Back-pressure still holds: past 1 MiB not yet on disk, the client waits.
 */
const WRITE_BUFFER_BYTES = 1024 * 1024;

export interface UploadPartsOptions {
  uploadDir: string;
  maxBytes: number;
  /** Largest field value in bytes (a longer one arrives with `valueTruncated`). */
  fieldSize: number;
  /** The stored name of the upload, from the name the client sent. */
  fileName: (sent: string | undefined) => string;
  /** Thrown when the file part was cut at `maxBytes` without the parser throwing. */
  truncated?: () => Error;
  /** Checks the file's line lengths against this limit as it streams in (see line-scan.ts). */
  maxLineBytes?: number;
}

export interface ReceivedParts {
  /** The `file` part, once streamed to disk; undefined when the body had none. */
  upload: Upload | undefined;
  /** Removes the temp file if nobody took it over (idempotent). */
  discard(): Promise<void>;
}

/** Reads every part; on any error removes the temp file and rethrows the parser's or `onField`'s error. */
export async function receiveParts(
  request: FastifyRequest,
  options: UploadPartsOptions,
  onField: (field: MultipartValue) => void,
): Promise<ReceivedParts> {
  let upload: Upload | undefined;
  const discard = async () => {
    if (upload) await rm(upload.path, { force: true });
  };
  try {
    const parts = request.parts({
      limits: { fileSize: options.maxBytes, fieldSize: options.fieldSize, fields: 16, parts: 32 },
    });
    for await (const part of parts) {
      if (part.type !== 'file') {
        onField(part);
        continue;
      }
      if (part.fieldname !== 'file') {
        part.file.resume();
        continue;
      }
      if (upload) throw new BadRequest('the multipart body has more than one "file" part');
      upload = {
        path: join(options.uploadDir, `${randomUUID()}.upload`),
        fileName: options.fileName(part.filename),
        size: 0,
      };
      const file = createWriteStream(upload.path, { highWaterMark: WRITE_BUFFER_BYTES });
      if (options.maxLineBytes === undefined) {
        await pipeline(part.file, file);
      } else {
        const lines = new LineLengthScan(options.maxLineBytes);
        await pipeline(part.file, lines, file);
        upload.lines = lines.result();
      }
      if (part.file.truncated && options.truncated) throw options.truncated();
      upload.size = part.file.bytesRead;
    }
    return { upload, discard };
  } catch (error) {
    await discard();
    throw error;
  }
}
