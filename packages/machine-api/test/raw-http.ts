/**
 * Sends an HTTP/1.1 request byte for byte over a TCP socket, the way a slicer's HTTP library writes it
 * (header order and spelling, multipart boundary and part order, `Expect: 100-continue`), and reads the
 * answer. fetch() would normalise all of that away.
 */

import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: string;
  /** Interim answers seen before the final one (e.g. `100`). */
  interim: number[];
}

export interface RawRequest {
  method: string;
  /** Path and query exactly as the client puts them on the request line. */
  target: string;
  /** In the order the client sends them; Content-Length is added when there is a body. */
  headers: [string, string][];
  body?: Buffer;
}

/** Sends `request` to `baseUrl`'s host and port. With `Expect: 100-continue` the body waits for `100`. */
export async function rawRequest(baseUrl: string, request: RawRequest): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const socket = connect({ host: url.hostname, port: Number(url.port) });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const headers = [...request.headers];
  if (request.body) headers.push(['Content-Length', String(request.body.length)]);
  const head = `${request.method} ${request.target} HTTP/1.1\r\n${headers.map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`;
  const expectContinue = headers.some(([k, v]) => k.toLowerCase() === 'expect' && v === '100-continue');
  let buffer = Buffer.alloc(0);
  const interim: number[] = [];
  let bodySent = false;
  const sendBody = () => {
    if (bodySent) return;
    bodySent = true;
    if (request.body) socket.write(request.body);
  };
  return new Promise<RawResponse>((resolve, reject) => {
    socket.on('error', reject);
    socket.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        const lines = buffer.subarray(0, end).toString('latin1').split('\r\n');
        const status = Number(lines[0]?.split(' ')[1]);
        const parsed: Record<string, string> = {};
        for (const line of lines.slice(1)) {
          const colon = line.indexOf(':');
          parsed[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
        }
        if (status >= 100 && status < 200) {
          interim.push(status);
          buffer = buffer.subarray(end + 4);
          if (status === 100) sendBody();
          continue;
        }
        const length = Number(parsed['content-length'] ?? 0);
        if (buffer.length < end + 4 + length) return;
        const body = buffer.subarray(end + 4, end + 4 + length).toString('utf8');
        // The server may answer before the body was asked for (a refusal); the client then never sends it.
        socket.end();
        resolve({ status, headers: parsed, body, interim });
        return;
      }
    });
    socket.write(head);
    if (!expectContinue) sendBody();
  });
}

/**
 * A multipart/form-data body as libcurl's `curl_formadd` writes it (PrusaSlicer, OrcaSlicer and
 * SuperSlicer): boundary of 24 dashes and 16 hex digits, text parts without a Content-Type, the file part
 * with `application/octet-stream` and the file name's raw UTF-8 bytes.
 */
export function curlMultipart(
  parts: ({ name: string; value: string } | { name: string; fileName: string; data: Buffer })[],
): { contentType: string; body: Buffer } {
  const boundary = `------------------------${'d74496d66958873e'}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    if ('value' in part) {
      chunks.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`,
          'utf8',
        ),
      );
    } else {
      chunks.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.fileName}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
          'utf8',
        ),
        part.data,
        Buffer.from('\r\n'),
      );
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat(chunks) };
}

/**
 * A multipart body as Qt's QHttpMultiPart writes it (Cura's OctoPrint plugin): a quoted
 * `boundary_.oOo._…` boundary, every part with its own Content-Type, Content-Type before
 * Content-Disposition.
 */
export function qtMultipart(parts: { disposition: string; contentType: string; data: Buffer }[]): {
  contentType: string;
  body: Buffer;
} {
  const boundary = 'boundary_.oOo._MjQ1NTU=OTk3Ng==MjU0ODc=';
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(
      Buffer.from(
        `--${boundary}\r\ncontent-type: ${part.contentType}\r\ncontent-disposition: ${part.disposition}\r\n\r\n`,
        'utf8',
      ),
      part.data,
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { contentType: `multipart/form-data; boundary="${boundary}"`, body: Buffer.concat(chunks) };
}
