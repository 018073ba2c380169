import { spawn } from 'node:child_process';
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { gitBaseEnv } from './command.js';

/** One smart-HTTP request handed to `git http-backend` (CGI/1.1). */
export interface HttpBackendRequest {
  /** Directory holding `<owner>/<repo>.git`. */
  projectRoot: string;
  /** `/<owner>/<repo>.git/<service path>`, relative to projectRoot. */
  pathInfo: string;
  queryString: string;
  method: string;
  contentType?: string;
  contentEncoding?: string;
  contentLength?: string;
  /** Set for authenticated callers; http-backend records it in the reflog. */
  remoteUser?: string;
  remoteAddr?: string;
  /** The `Git-Protocol` header (protocol v2 negotiation). */
  gitProtocol?: string;
  body: Readable;
  /**
   * Runs after git exits and before the response ends, so work that must be visible once the client's
   * command returns (post-push synchronisation) completes first. It must handle (log) its own failures;
   * the response ends either way.
   */
  beforeEnd?: (exitCode: number | null) => Promise<void>;
}

const MAX_CGI_HEADER_BYTES = 64 * 1024;

/** Splits CGI output headers; `Status: 404 Not Found` becomes the HTTP status. */
export function parseCgiHeaders(head: string): { status: number; headers: Array<[string, string]> } {
  let status = 200;
  const headers: Array<[string, string]> = [];
  for (const line of head.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === 'status') {
      const code = Number.parseInt(value, 10);
      if (code >= 100 && code <= 599) status = code;
    } else {
      headers.push([name, value]);
    }
  }
  return { status, headers };
}

function findHeaderEnd(buffer: Buffer): { end: number; bodyStart: number } | null {
  const crlf = buffer.indexOf('\r\n\r\n');
  const lf = buffer.indexOf('\n\n');
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return { end: crlf, bodyStart: crlf + 4 };
  if (lf >= 0) return { end: lf, bodyStart: lf + 2 };
  return null;
}

/**
 * Runs `git http-backend` for one request, streaming the request body to it and its output to `res`.
 * Resolves with the HTTP status sent once git has exited and the response has ended.
 */
export function serveHttpBackend(request: HttpBackendRequest, res: ServerResponse): Promise<number> {
  const env: NodeJS.ProcessEnv = {
    ...gitBaseEnv(),
    GIT_PROJECT_ROOT: request.projectRoot,
    GIT_HTTP_EXPORT_ALL: '1',
    PATH_INFO: request.pathInfo,
    QUERY_STRING: request.queryString,
    REQUEST_METHOD: request.method,
    GATEWAY_INTERFACE: 'CGI/1.1',
    SERVER_PROTOCOL: 'HTTP/1.1',
  };
  if (request.contentType) env.CONTENT_TYPE = request.contentType;
  if (request.contentLength) env.CONTENT_LENGTH = request.contentLength;
  if (request.contentEncoding) env.HTTP_CONTENT_ENCODING = request.contentEncoding;
  if (request.remoteUser) env.REMOTE_USER = request.remoteUser;
  if (request.remoteAddr) env.REMOTE_ADDR = request.remoteAddr;
  if (request.gitProtocol) env.GIT_PROTOCOL = request.gitProtocol;

  return new Promise((resolve, reject) => {
    const child = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let head: Buffer = Buffer.alloc(0);
    let headersSent = false;
    let status = 500;
    let stderr = '';
    let settled = false;
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      if (error) reject(error);
      else resolve(status);
    };

    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 8192) stderr += chunk.toString('utf8');
    });
    child.stdout.on('data', (chunk: Buffer) => {
      if (headersSent) {
        if (!res.write(chunk)) {
          child.stdout.pause();
          res.once('drain', () => child.stdout.resume());
        }
        return;
      }
      head = Buffer.concat([head, chunk]);
      const split = findHeaderEnd(head);
      if (!split) {
        if (head.length > MAX_CGI_HEADER_BYTES) child.kill('SIGKILL');
        return;
      }
      const parsed = parseCgiHeaders(head.subarray(0, split.end).toString('latin1'));
      status = parsed.status;
      res.statusCode = status;
      for (const [name, value] of parsed.headers) res.appendHeader(name, value);
      headersSent = true;
      res.write(head.subarray(split.bodyStart));
    });
    child.on('error', (error: NodeJS.ErrnoException) => {
      finish(
        error.code === 'ENOENT'
          ? new Error('git http-backend is not available (apt-get install -y git)')
          : error,
      );
    });
    child.on('close', (code) => {
      if (!headersSent) {
        finish(new Error(`git http-backend exited (${code}) without a response: ${stderr.trim()}`));
        return;
      }
      const before = request.beforeEnd ? request.beforeEnd(code) : Promise.resolve();
      before.finally(() => res.end(() => finish()));
    });
    // If the client goes away mid-transfer, stop git rather than let it block on a dead pipe.
    res.on('close', () => {
      if (!res.writableFinished) child.kill('SIGTERM');
    });
    child.stdin.on('error', () => {});
    request.body.on('error', () => child.kill('SIGTERM'));
    request.body.pipe(child.stdin);
  });
}
