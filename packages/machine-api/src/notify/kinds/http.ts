/**
 * One bounded HTTP request for the HTTP kinds: a deadline (the attempt's signal), a bounded read of the
 * answer, and failures described without the URL (which may hold a token) or the library's own message.
 */

import { Agent, type Dispatcher, type FormData, request } from 'undici';
import { type AttemptResult, parseRetryAfter, retryableStatus } from '../rules.js';

/** At most this much of an answer is read (the rest is discarded); a notification answer is small. */
const MAX_ANSWER_BYTES = 16 * 1024;
/** How much of an answer the delivery log keeps. */
const LOGGED_ANSWER_CHARS = 300;

/** One connection pool for every notification target, apart from the service's other clients. */
const agent = new Agent({ keepAliveTimeout: 10_000, connections: 16 });

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export interface HttpRequest {
  method: 'POST' | 'PUT';
  url: string;
  headers: Record<string, string>;
  body: Dispatcher.DispatchOptions['body'] | FormData;
  signal: AbortSignal;
}

/** Sends the request; resolves with the answer (any status) or throws a `SendError` without secrets. */
export async function httpRequest(req: HttpRequest): Promise<HttpAnswer> {
  let answer: Dispatcher.ResponseData<unknown>;
  try {
    answer = await request(req.url, {
      method: req.method,
      headers: req.headers,
      body: req.body as Dispatcher.DispatchOptions['body'],
      signal: req.signal,
      dispatcher: agent,
    } as Parameters<typeof request>[1]);
  } catch (error) {
    throw new SendError(describeFailure(error, req.signal));
  }
  let text = '';
  let size = 0;
  try {
    for await (const chunk of answer.body) {
      size += (chunk as Buffer).length;
      if (text.length < MAX_ANSWER_BYTES) text += (chunk as Buffer).toString('utf8');
      if (size >= MAX_ANSWER_BYTES) break;
    }
  } catch {
    // A body cut short still leaves a status to judge by.
  } finally {
    answer.body.destroy();
  }
  return { status: answer.statusCode, headers: answer.headers, text };
}

/** A failure to reach a target, described in words that never include the request's URL. */
export class SendError extends Error {}

function describeFailure(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) return 'no answer within the timeout';
  const code =
    (error as { code?: string; cause?: { code?: string } }).code ??
    (error as { cause?: { code?: string } }).cause?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'connection closed before an answer';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host name not found';
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
      return 'no answer within the timeout';
    case 'CERT_HAS_EXPIRED':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `TLS certificate not trusted (${code})`;
    default:
      return code ? `request failed (${code})` : 'request failed';
  }
}

/** The usual judgement of an HTTP answer: 2xx delivered; 408/429/5xx retried (with `Retry-After`); else failed. */
export function judged(answer: HttpAnswer): AttemptResult {
  const response = answer.text.slice(0, LOGGED_ANSWER_CHARS) || null;
  if (answer.status >= 200 && answer.status < 300) return { ok: true, status: answer.status, response };
  const retryAfter = parseRetryAfter(answer.headers['retry-after']);
  return {
    ok: false,
    retry: retryableStatus(answer.status),
    status: answer.status,
    response,
    error: `the target answered HTTP ${answer.status}`,
    ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}),
  };
}

/** Runs one HTTP attempt and judges it; a failure to connect is retried. */
export async function attempt(send: () => Promise<HttpAnswer>, judge = judged): Promise<AttemptResult> {
  try {
    return judge(await send());
  } catch (error) {
    const message = error instanceof SendError ? error.message : 'request failed';
    return { ok: false, retry: true, status: null, response: null, error: message };
  }
}
