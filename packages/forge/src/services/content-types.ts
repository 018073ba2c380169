/**
 * What a stored file is, from its first bytes (Gitea sniffs uploads and downloads the same way:
 * services/context/upload/upload.go `Verify`, modules/typesniffer). Binary formats are recognised by the
 * `file-type` library's signatures; anything without binary control bytes is text.
 */
import { extname } from 'node:path';
import { fileTypeFromBuffer } from 'file-type';

/** How many leading bytes the decisions below look at (Gitea reads 1024). */
export const SNIFF_BYTES = 1024;

export const OCTET_STREAM = 'application/octet-stream';
export const TEXT_PLAIN = 'text/plain; charset=utf-8';

/** Bytes that Go's `http.DetectContentType` treats as binary (the WHATWG "binary data byte" set). */
function looksLikeText(head: Uint8Array): boolean {
  for (const byte of head) {
    if (byte <= 0x08 || byte === 0x0b || (byte >= 0x0e && byte <= 0x1a) || (byte >= 0x1c && byte <= 0x1f)) {
      return false;
    }
  }
  return true;
}

/** The detected MIME type of content starting with `head` (parameters included, as Go reports it). */
export async function detectContentType(head: Uint8Array): Promise<string> {
  if (head.length > 0) {
    const detected = await fileTypeFromBuffer(head).catch(() => undefined);
    if (detected) return detected.mime;
  }
  return looksLikeText(head) ? TEXT_PLAIN : OCTET_STREAM;
}

/** Types a browser may show inline without running anything (Gitea's `IsBrowsableBinaryType`). */
function isBrowsableBinary(mime: string): boolean {
  if (mime === 'image/svg+xml') return false;
  return /^(image|video|audio)\//.test(mime) || mime === 'application/pdf';
}

/** The Content-Type a download is served with: media as detected, text as text/plain, the rest opaque. */
export async function servedContentType(head: Uint8Array): Promise<string> {
  const detected = await detectContentType(head);
  if (isBrowsableBinary(detected)) return detected;
  return detected === TEXT_PLAIN ? TEXT_PLAIN : OCTET_STREAM;
}

/** Gitea's upload.ErrFileTypeForbidden text. */
export const FORBIDDEN_TYPE_MESSAGE =
  'This file cannot be uploaded or modified due to a forbidden file extension or type.';

/** The entries of an ALLOWED_TYPES setting: comma- (or legacy pipe-) separated, lower-cased. */
function allowedEntries(setting: string): string[] {
  return setting
    .replaceAll('|', ',')
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry !== '');
}

/**
 * Gitea's `upload.Verify`: true when `fileName`'s extension or the sniffed type of `head` matches an
 * allowed entry (`.ext`, `type/subtype`, `type/*`, `*` + `/*`). An empty setting allows everything;
 * without content (`head` null, a rename) only the extension can match.
 */
export async function isAllowedType(
  head: Uint8Array | null,
  fileName: string,
  allowedTypes: string,
): Promise<boolean> {
  const entries = allowedEntries(allowedTypes);
  if (entries.length === 0) return true;
  const extension = extname(fileName).toLowerCase();
  const mime = head ? (await detectContentType(head)).split(';')[0]!.trim() : '';
  return entries.some((entry) => {
    if (entry === '*/*') return true;
    if (entry.startsWith('.')) return entry === extension;
    if (!mime) return false;
    if (/^[a-z]+\/\*$/.test(entry)) return mime.startsWith(entry.slice(0, -1));
    return entry === mime;
  });
}
