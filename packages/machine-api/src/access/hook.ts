/**
 * The one place HTTP meets the access rules: CORS answers (per request, from origins.ts; preflights by
 * @fastify/cors), an `onRequest` hook that sets the CORS headers of actual requests and refuses
 * foreign-origin writes, then, on each route that is not open, an `onRequest` hook that authenticates the
 * key and checks the route's scope (scopes.ts). All run before the body is read, so a refused request
 * changes nothing and costs no upload. Handlers find the caller in `request.actor`.
 */

import cors from '@fastify/cors';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import { ForeignOrigin, MissingScope, Unauthorized } from './errors.js';
import type { KeyService } from './keys.js';
import { changesState, classifyOrigin, corsOrigin } from './origins.js';
import { type Actor, ANONYMOUS, allows, neededScope, type Rule, ruleFor } from './scopes.js';
import type { AccessSettings } from './settings.js';

const READ_METHODS = ['GET', 'HEAD'];
const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
/** Response headers a page may read cross-origin. */
const EXPOSED_HEADERS = 'x-request-id';

const VARY_ONLY: readonly (readonly [string, string])[] = [['vary', 'Origin']];
const ANY_ORIGIN: readonly (readonly [string, string])[] = [
  ['vary', 'Origin'],
  ['access-control-allow-origin', '*'],
  ['access-control-expose-headers', EXPOSED_HEADERS],
];

/**
 * The CORS headers of an answer to an actual (not preflight) request, in the order they are sent, given
 * what `corsOrigin` allows.
 */
export function corsHeaders(allowed: string | false): readonly (readonly [string, string])[] {
  if (allowed === false) return VARY_ONLY;
  if (allowed === '*') return ANY_ORIGIN;
  return [
    ['vary', 'Origin'],
    ['access-control-allow-origin', allowed],
    ['access-control-expose-headers', EXPOSED_HEADERS],
  ];
}

/** The key a request presents: `X-Api-Key` (OctoPrint, Moonraker, slicers) or `Authorization: Bearer`. */
export function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers['x-api-key'];
  const apiKey = Array.isArray(header) ? header[0] : header;
  if (apiKey) return apiKey.trim();
  const authorization = request.headers.authorization;
  const bearer = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
  return bearer?.[1];
}

/** What the access hook asks about camera tokens (camera-tokens.ts). */
export interface CameraTokenCheck {
  verify(machineId: string, token: string): Promise<boolean>;
}

/** Registers CORS and the access hook; call before any route is added. */
export async function installAccess(
  app: FastifyInstance,
  options: { settings: AccessSettings; keys: KeyService; cameraTokens: CameraTokenCheck },
): Promise<void> {
  const { settings, keys, cameraTokens } = options;
  const { origins } = settings;
  app.decorateRequest('actor', null);

  // Preflights are @fastify/cors's, registered in a context of their own that holds just its OPTIONS
  // route: its options delegator is resolved and normalised again on every request it sees, which cost
  // more than the rest of a small answer. Every other request gets its CORS headers from the hook below,
  // from the same policy (origins.ts) and with the same headers the plugin would set.
  await app.register(async (preflights) => {
    await preflights.register(cors, {
      hideOptionsRoute: true,
      delegator: (request, callback) => {
        const origin = request.headers.origin;
        const kind = classifyOrigin(origin, request.headers.host, origins);
        // A preflight asks about the method the page wants to send next, not about OPTIONS.
        const asked = request.headers['access-control-request-method'];
        const method =
          request.method === 'OPTIONS' && typeof asked === 'string' ? asked.toUpperCase() : request.method;
        const write = changesState(method);
        const mayWrite = kind === 'listed' || kind === 'own';
        callback(null, {
          origin: corsOrigin(kind, origin, write, origins),
          methods: mayWrite ? ALL_METHODS : READ_METHODS,
          exposedHeaders: [EXPOSED_HEADERS],
          maxAge: 600,
          // Any OPTIONS request is answered as a preflight, so it never falls into the 405 routes.
          strictPreflight: false,
        });
      },
    });
  });

  // Every request: the CORS headers of an actual request and the refusal of foreign-origin writes, which
  // depend on the method and Origin only. Callback style: no promise per request.
  app.addHook('onRequest', (request, reply, done) => {
    const origin = request.headers.origin;
    const kind = classifyOrigin(origin, request.headers.host, origins);
    const write = changesState(request.method);
    // The headers of a CORS answer to an actual request: the answer depends on Origin, and a page may
    // read it (and its request id) when the policy allows its origin.
    // (A preflight is the plugin's alone.)
    if (request.method !== 'OPTIONS') {
      for (const [name, value] of corsHeaders(corsOrigin(kind, origin, write, origins))) {
        reply.header(name, value);
      }
    }
    if (write && kind === 'foreign') {
      done(
        new ForeignOrigin(
          `requests that change state are refused from the web origin ${JSON.stringify(origin)}; list it in [server] allowed_origins to allow a web front end there`,
        ),
      );
      return;
    }
    done();
  });

  // The key and scope check depends on the route only, so each route's rule is found once, here, and a
  // route whose rule is open (`/ping`, `/`, the dashboard's files) gets no check at all. Route-level
  // onRequest hooks run after the global ones, so the foreign-origin refusal above still comes first.
  // Requests that match no route (404) and the generated 405 routes answer whatever the key.
  app.addHook('onRoute', (route) => {
    if (route.config?.methodNotAllowed) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const rules = new Map<string, Rule>();
    for (const method of methods) {
      const rule = ruleFor(method, route.url, { metricsOpen: settings.metricsOpen });
      if (rule && rule.kind !== 'open') rules.set(method, rule);
    }
    if (rules.size === 0) return;
    const check = keyCheck(route.url ?? '', rules, settings, keys, cameraTokens);
    const existing = route.onRequest;
    // A new array: Fastify's HEAD twin of a GET route is built from a copy of the same options.
    route.onRequest = [
      ...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]),
      check,
    ];
  });
}

/** The onRequest hook of a route that needs a key (or, with `auth = "off"`, an actor). */
function keyCheck(
  route: string,
  rules: ReadonlyMap<string, Rule>,
  settings: AccessSettings,
  keys: KeyService,
  cameraTokens: CameraTokenCheck,
): onRequestHookHandler {
  return (request, reply, done) => {
    const rule = rules.get(request.method);
    if (!rule) return done();
    if (!settings.keysRequired) {
      request.actor = ANONYMOUS;
      return done();
    }
    const token = rule.kind === 'camera' ? cameraToken(request) : undefined;
    if (token !== undefined) {
      const machineId = (request.params as { target?: string }).target ?? '';
      cameraTokens.verify(machineId, token).then((valid) => {
        if (!valid) return done(new Unauthorized('the camera token is not valid (unknown or revoked)'));
        // Read-only and for this one machine's camera: the route serves nothing else.
        request.actor = { name: `camera:${machineId}`, scopes: new Set(['read']) };
        done();
      }, done);
      return;
    }
    const key = presentedKey(request);
    if (!key) {
      reply.header('www-authenticate', 'Bearer realm="machine-api"');
      return done(new Unauthorized('an API key is required: send it as X-Api-Key or Authorization: Bearer'));
    }
    keys.authenticate(key).then((actor) => {
      if (!actor) {
        reply.header('www-authenticate', 'Bearer realm="machine-api", error="invalid_token"');
        return done(new Unauthorized('the API key is not valid (unknown or revoked)'));
      }
      request.actor = actor;
      done(scopeError(request.method, route, rule, actor));
    }, done);
  };
}

/** The `token` query parameter of a webcam URL, if any. */
function cameraToken(request: FastifyRequest): string | undefined {
  const value = (request.query as Record<string, unknown> | undefined)?.token;
  return typeof value === 'string' ? value : undefined;
}

/** Undefined when `actor` passes `rule`, else the 403 naming the scope it lacks. */
function scopeError(method: string, route: string, rule: Rule, actor: Actor): MissingScope | undefined {
  if (rule.kind === 'key') return undefined;
  // Ownership is the job service's to judge; here only whether the key could act on any job at all.
  if (rule.kind === 'own-job' && (allows(actor, 'print') || allows(actor, 'control'))) return undefined;
  if (rule.kind === 'scope' && allows(actor, rule.scope)) return undefined;
  if (rule.kind === 'camera' && allows(actor, 'read')) return undefined;
  const path = route.replace(/:(\w+)/g, '{$1}');
  const others = rule.kind === 'own-job' ? ' (or "control" for jobs of other keys)' : '';
  return new MissingScope(
    `the API key "${actor.name}" lacks the "${neededScope(rule)}" scope needed for ${method} ${path}${others}`,
  );
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is asking (set by the access hook on every route that is not open). */
    actor: Actor | null;
  }
}

const SECRET_PARAMS = /([?&](?:apikey|api_key|key|token|access_token)=)[^&#]*/gi;

/** The request URL for the log: a key some client put in the query (OctoPrint allows `?apikey=`) is masked. */
export function loggableUrl(url: string): string {
  return url.includes('?') ? url.replace(SECRET_PARAMS, '$1[redacted]') : url;
}
