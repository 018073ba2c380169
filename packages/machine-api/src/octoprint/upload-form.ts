/**
 * Reads the multipart body of `POST api/files/local` as OctoPrint defines it: a `file` part and the
 * optional fields `path`, `select`, `print` (any order; PrusaSlicer sends `print`, `path`, then `file`,
 * Cura `path`, `file`, `select`, `print`; OrcaSlicer may add `plateindex`, which is ignored like any
 * other field). The file is streamed to a temp file under the upload limit, never held in memory.
 */

import type { FastifyRequest } from 'fastify';
import { BadRequest, PayloadTooLarge } from '../errors.js';
import type { Upload } from '../jobs/runner.js';
import { receiveParts } from '../server/upload-parts.js';

export interface OctoPrintUpload {
  upload: Upload;
  path: string;
  select: boolean;
  print: boolean;
  /** Removes the temp file if nobody took it over (idempotent). */
  discard(): Promise<void>;
}

const FIELD_LIMIT = 4096;
/** OctoPrint's own list of true values for these form fields. */
const TRUE_VALUES = new Set(['true', 'yes', 'y', '1', 'on']);

export async function receiveOctoPrintUpload(
  request: FastifyRequest,
  options: { uploadDir: string; maxBytes: number },
): Promise<OctoPrintUpload> {
  if (!request.isMultipart()) {
    throw new BadRequest('POST api/files/local expects a multipart/form-data body with a "file" part');
  }
  const fields: Record<string, string> = {};
  let discard = async () => {};
  try {
    const received = await receiveParts(
      request,
      {
        uploadDir: options.uploadDir,
        maxBytes: options.maxBytes,
        fieldSize: FIELD_LIMIT,
        // The parser reads the name's bytes as UTF-8 (what libcurl and Qt send) and drops directories.
        fileName: (sent) => sent ?? '',
        truncated: () => new PayloadTooLarge('the "file" part is larger than the upload limit'),
      },
      (field) => {
        if (field.valueTruncated)
          throw new BadRequest(`the "${field.fieldname}" field is longer than ${FIELD_LIMIT} bytes`);
        fields[field.fieldname] = String(field.value);
      },
    );
    const { upload } = received;
    discard = received.discard;
    if (!upload) throw new BadRequest('the multipart body has no "file" part');
    const flag = (name: string) => TRUE_VALUES.has((fields[name] ?? '').trim().toLowerCase());
    return { upload, path: fields.path ?? '', select: flag('select'), print: flag('print'), discard };
  } catch (error) {
    await discard();
    const code = (error as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE') {
      throw new PayloadTooLarge(
        `the "file" part is larger than the upload limit of ${options.maxBytes} bytes`,
      );
    }
    if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') {
      throw new BadRequest('the multipart body has too many parts');
    }
    if (
      error instanceof Error &&
      !(error as { statusCode?: number }).statusCode &&
      /boundary|multipart|Unexpected end of form|Malformed/i.test(error.message)
    ) {
      throw new BadRequest(`malformed multipart body: ${error.message}`);
    }
    throw error;
  }
}
