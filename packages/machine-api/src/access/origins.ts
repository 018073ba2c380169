/**
 * Drive-by protection: a web page open in a browser on the workshop's network must not be able to start,
 * stop or pause printers. Browsers send `Origin` with every cross-origin request and with every POST, so
 * a state-changing request whose `Origin` is neither the service's own nor listed in
 * `[server] allowed_origins` is refused whatever `auth` says. Clients that are not browsers (curl,
 * slicers, scripts) send no `Origin` and are unaffected. Pure functions; hook.ts applies them.
 */

import { isIP } from 'node:net';

/** Methods that only read; every other method changes state (OPTIONS is the CORS preflight). */
export function changesState(method: string): boolean {
  return method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';
}

export type OriginKind = 'none' | 'own' | 'listed' | 'foreign';

export interface OriginPolicy {
  /** `[server] allowed_origins`, normalised (`scheme://host[:port]`, lower case). */
  allowed: ReadonlySet<string>;
  /** Origins allowed to read cross-origin: `*` for any (the default), else a list. */
  readOrigins: '*' | ReadonlySet<string>;
  /** Host names that stand for this machine (its hostname, `<hostname>.local`). */
  ownHostNames: ReadonlySet<string>;
}

/**
 * `scheme://host[:port]` in lower case with default ports dropped, or null for anything else. Besides
 * http(s), desktop apps built on web views send their own scheme (`app://modeling-app`), which can be
 * listed too; `null` (sandboxed frames, file:// pages) never can.
 */
export function normaliseOrigin(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.search || url.hash || url.username || url.password || !url.host) return null;
  if (url.protocol === 'http:' || url.protocol === 'https:') {
    return url.pathname === '/' ? url.origin.toLowerCase() : null;
  }
  return url.pathname === '' || url.pathname === '/' ? `${url.protocol}//${url.host}`.toLowerCase() : null;
}

/**
 * Whether `origin` is the service's own: the page was served by this host and port (the dashboard at
 * /ui/). The Host header alone is not trusted for this: with DNS rebinding a hostile page at
 * `http://rebind.example:8080` reaches us with a matching Host. So the host must also be an IP literal,
 * `localhost`, or a name of this machine, none of which a hostile site can serve pages from.
 */
function isOwnOrigin(origin: string, host: string | undefined, policy: OriginPolicy): boolean {
  if (!host) return false;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.host.toLowerCase() !== host.toLowerCase()) return false;
  const hostname = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return isIP(hostname) !== 0 || hostname === 'localhost' || policy.ownHostNames.has(hostname);
}

/** Classifies the `Origin` of a request (`origin` undefined: not sent, i.e. not a browser page's fetch). */
export function classifyOrigin(
  origin: string | undefined,
  host: string | undefined,
  policy: OriginPolicy,
): OriginKind {
  if (origin === undefined) return 'none';
  // `Origin: null` comes from sandboxed frames, file:// pages and redirects: never trusted.
  const normalised = normaliseOrigin(origin);
  if (normalised === null) return 'foreign';
  if (policy.allowed.has(normalised)) return 'listed';
  if (isOwnOrigin(origin, host, policy)) return 'own';
  return 'foreign';
}

/**
 * The `Access-Control-Allow-Origin` a response or preflight gets, or false for none (the browser then
 * refuses to hand the answer to the page, or to send the request the preflight asked about).
 * Reads are open to `readOrigins`; writes only to listed and own origins.
 */
export function corsOrigin(
  kind: OriginKind,
  origin: string | undefined,
  write: boolean,
  policy: OriginPolicy,
): string | false {
  // No Origin: not a page's request; the anchor's `*` stays (it tells a non-browser nothing).
  if (origin === undefined) return policy.readOrigins === '*' ? '*' : false;
  if (kind === 'listed' || kind === 'own') return origin;
  if (write) return false;
  if (policy.readOrigins === '*') return '*';
  const normalised = normaliseOrigin(origin);
  return normalised !== null && policy.readOrigins.has(normalised) ? origin : false;
}
