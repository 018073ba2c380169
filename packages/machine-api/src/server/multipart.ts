/**
 * Reads `POST /print`'s multipart body: the `file` part is streamed to a temp file (never held in memory),
 * capped at the configured size; the `params` part is kept as text. On any error the temp file is removed.
 */

import type { FastifyRequest } from 'fastify';
import { BadRequest, PayloadTooLarge } from '../errors.js';
import type { Upload } from '../jobs/runner.js';
import { receiveParts } from './upload-parts.js';

export interface PrintForm {
  upload: Upload;
  /** Raw text of the `params` part. */
  params: string;
  /** Removes the temp file if nobody took it over (idempotent). */
  discard(): Promise<void>;
}

const PARAMS_LIMIT = 64 * 1024;

/** The client's file name without any directory part (browsers and curl may send paths). */
function plainFileName(name: string | undefined): string {
  const base = (name ?? '').replaceAll('\\', '/').split('/').pop()?.trim() ?? '';
  return base.slice(0, 255) || 'design';
}

/** Streams the parts of a print request; throws `BadRequest` / `PayloadTooLarge` naming what is wrong. */
export async function receivePrintForm(
  request: FastifyRequest,
  options: {
    uploadDir: string;
    maxBytes: number;
    /** The line limit of text designs, checked as the file streams in (see line-scan.ts). */
    maxLineBytes?: number;
    route?: string;
    paramsSchema?: string;
  },
): Promise<PrintForm> {
  const route = options.route ?? 'POST /print';
  const paramsSchema = options.paramsSchema ?? 'PrintParameters';
  if (!request.isMultipart()) {
    throw new BadRequest(
      `${route} expects a multipart/form-data body with a "file" part and a "params" part`,
    );
  }
  let params: string | undefined;
  let discard = async () => {};
  try {
    const received = await receiveParts(
      request,
      {
        uploadDir: options.uploadDir,
        maxBytes: options.maxBytes,
        ...(options.maxLineBytes !== undefined ? { maxLineBytes: options.maxLineBytes } : {}),
        fieldSize: PARAMS_LIMIT,
        fileName: plainFileName,
      },
      (field) => {
        if (field.fieldname !== 'params') return;
        if (field.valueTruncated)
          throw new BadRequest(`the "params" part is larger than ${PARAMS_LIMIT} bytes`);
        params = String(field.value);
      },
    );
    const { upload } = received;
    discard = received.discard;
    if (!upload) throw new BadRequest('the multipart body has no "file" part (the design to print)');
    if (params === undefined)
      throw new BadRequest(`the multipart body has no "params" part (JSON ${paramsSchema})`);
    return { upload, params, discard };
  } catch (error) {
    await discard();
    throw translate(error, options.maxBytes);
  }
}

/** Multipart parser errors → the service's errors, with a message a person can act on. */
function translate(error: unknown, maxBytes: number): unknown {
  const code = (error as { code?: string }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') {
    return new PayloadTooLarge(`the "file" part is larger than the upload limit of ${formatBytes(maxBytes)}`);
  }
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') {
    return new BadRequest('the multipart body has too many parts; send "file" and "params"');
  }
  if (
    code === 'FST_INVALID_MULTIPART_CONTENT_TYPE' ||
    (error instanceof Error &&
      /boundary|multipart|Unexpected end of form|Malformed/i.test(error.message) &&
      !(error as { statusCode?: number }).statusCode)
  ) {
    return new BadRequest(`malformed multipart body: ${(error as Error).message}`);
  }
  return error;
}

function formatBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return Number.isInteger(mib) ? `${mib} MiB` : `${bytes} bytes`;
}
