/** Reading the parts of a provider request: form and query parameters, and the Authorization header. */

import type { FastifyRequest } from 'fastify';

/** Longest value accepted for any authorization or sign-in parameter. */
const MAX_PARAM = 2048;

/** A single string parameter of a query or form: '' when absent, null when repeated, oversized or not text. */
export function param(source: unknown, name: string): string | null {
  const value = (source as Record<string, unknown> | undefined)?.[name];
  if (value === undefined) return '';
  if (typeof value !== 'string' || value.length > MAX_PARAM || value.includes('\u0000')) return null;
  return value;
}

/** A local path to return to after sign-in; anything else (other hosts, `//x`, `/\x`) becomes the root. */
export function safeRedirectTarget(value: string | null, fallback: string): string {
  if (!value?.startsWith('/') || value.startsWith('//') || value.includes('\\')) return fallback;
  if ([...value].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) return fallback;
  return value;
}

/** The `token|bearer <t>` of an Authorization header, or null. */
export function bearerToken(request: FastifyRequest): string | null {
  const fields = (request.headers.authorization ?? '').trim().split(/\s+/);
  return fields.length === 2 && /^(token|bearer)$/i.test(fields[0]!) ? fields[1]! : null;
}

/** `client_id:client_secret` of an Authorization: Basic header, or null. */
export function basicClient(request: FastifyRequest): { id: string; secret: string } | null {
  const fields = (request.headers.authorization ?? '').trim().split(/\s+/);
  if (fields.length !== 2 || fields[0]!.toLowerCase() !== 'basic') return null;
  const decoded = Buffer.from(fields[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  // RFC 6749 §2.3.1: both parts are form-urlencoded inside the Basic credentials.
  try {
    return {
      id: decodeURIComponent(decoded.slice(0, colon).replaceAll('+', ' ')),
      secret: decodeURIComponent(decoded.slice(colon + 1).replaceAll('+', ' ')),
    };
  } catch {
    return null;
  }
}
