/**
 * Who may do what: the four scopes of an API key and the rule each route follows. Pure functions, no
 * HTTP: the Fastify hook (hook.ts) asks `ruleFor(method, route)` and `allows(actor, scope)`.
 *
 *   read     every GET (machines, jobs, files, events, metrics unless open)
 *   print    POST /print, POST /queue, slicer uploads, printing stored files, cancelling/requeueing OWN jobs
 *   control  pause/resume/stop/clear a machine, assign its Spoolman spool, heater targets and pre-heat, cancel/requeue/change ANY job
 *   clear    POST /machines/{id}/clear and nothing else: the key a bed sensor or an automation holds
 *            (`clearing = "external"`); `control` includes it
 *   admin    managing keys and notification targets, reading the delivery log; implies every other scope (an admin can mint any key anyway, so withholding
 *            a scope from it would only be friction)
 */

export const SCOPES = ['read', 'print', 'control', 'clear', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** Who is asking: the key's name and scopes, or everyone when `auth = "off"`. */
export interface Actor {
  /** The key's name; null when access control is off (the request is anonymous). */
  name: string | null;
  scopes: ReadonlySet<Scope>;
}

/** The actor of every request when `auth = "off"`: may do everything, owns nothing. */
export const ANONYMOUS: Actor = { name: null, scopes: new Set(SCOPES) };

export function allows(actor: Actor, scope: Scope): boolean {
  if (scope === 'clear' && actor.scopes.has('control')) return true;
  return actor.scopes.has('admin') || actor.scopes.has(scope);
}

/** Parses `read,print` (CLI, HTTP); throws a message naming the bad scope. */
export function parseScopes(list: readonly string[]): Scope[] {
  const scopes = new Set<Scope>();
  for (const raw of list) {
    const scope = raw.trim();
    if (!(SCOPES as readonly string[]).includes(scope)) {
      throw new Error(`unknown scope "${scope}"; expected some of ${SCOPES.join(', ')}`);
    }
    scopes.add(scope as Scope);
  }
  if (scopes.size === 0) throw new Error(`at least one scope is needed (${SCOPES.join(', ')})`);
  return SCOPES.filter((scope) => scopes.has(scope));
}

/**
 * What a route asks of the caller:
 * - `open`: nobody needs a key (the probes clients make before they have one, static UI files);
 * - `key`: any valid key, whatever its scopes (the OctoPrint handshake a slicer makes with its key);
 * - `scope`: a key with that scope;
 * - `own-job`: `print` for the caller's own jobs, `control` for anyone's (the job service decides,
 *   since only it knows the owner);
 * - `camera`: the machine's camera token in `?token=` (camera-tokens.ts), or a key with `read` (the
 *   webcam URLs OctoPrint clients fetch without their key).
 */
export type Rule =
  | { kind: 'open' }
  | { kind: 'key' }
  | { kind: 'scope'; scope: Scope }
  | { kind: 'own-job' }
  | { kind: 'camera' };

const OPEN: Rule = { kind: 'open' };
const KEY: Rule = { kind: 'key' };
const scope = (s: Scope): Rule => ({ kind: 'scope', scope: s });
const OWN_JOB: Rule = { kind: 'own-job' };
const CAMERA: Rule = { kind: 'camera' };

/** OctoPrint endpoints a slicer calls to test its connection; they show nothing about machines or jobs. */
const OCTOPRINT_HANDSHAKE = new Set([
  'api/version',
  'api/server',
  'api/settings',
  'api/currentuser',
  'api/login',
]);

/**
 * OctoPrint endpoints an app calls before it has a key: the Application Keys flow (the token in the
 * polling URL is what the app holds) and the push channel (it authenticates with a session inside).
 */
const OCTOPRINT_OPEN = new Set([
  'plugin/appkeys/probe',
  'plugin/appkeys/request',
  'plugin/appkeys/request/:token',
  'sockjs/websocket',
]);

/** Writes, by route; anything not listed here needs `admin` (fail closed for routes nobody classified). */
const WRITES: Record<string, Rule> = {
  'POST /print': scope('print'),
  'POST /queue': scope('print'),
  'POST /files/:name/print': scope('print'),
  'DELETE /files/:name': OWN_JOB,
  'POST /octoprint/:target/api/files/local': scope('print'),
  'POST /octoprint/:target/api/files/local/*': scope('print'),
  'POST /octoprint/:target/api/job': scope('control'),
  'POST /octoprint/:target/api/printer/tool': scope('control'),
  'POST /octoprint/:target/api/printer/bed': scope('control'),
  'POST /octoprint/:target/api/connection': scope('control'),
  // There are none: any key learns that (Home Assistant's restart buttons), nothing runs.
  'POST /octoprint/:target/api/system/commands/:source/:action': KEY,
  'POST /machines/:id/pause': scope('control'),
  'POST /machines/:id/resume': scope('control'),
  'POST /machines/:id/stop': scope('control'),
  'POST /machines/:id/clear': scope('clear'),
  'PUT /machines/:id/spool': scope('control'),
  'POST /machines/:id/temperature': scope('control'),
  'POST /machines/preheat': scope('control'),
  'POST /jobs/:id/cancel': OWN_JOB,
  'POST /jobs/:id/requeue': OWN_JOB,
  'PATCH /jobs/:id': OWN_JOB,
  'DELETE /jobs/:id': OWN_JOB,
  'POST /keys': scope('admin'),
  'DELETE /keys/:name': scope('admin'),
};

export interface RuleOptions {
  /** `[server] metrics_auth`: whether `/metrics` needs a `read` key or is open to scrapers. */
  metricsOpen: boolean;
}

/**
 * The rule for `method` on the route pattern `route` (Fastify's `/machines/:id`), or undefined for a
 * request that matched no route (it gets its 404/405 whatever the key).
 */
export function ruleFor(method: string, route: string | undefined, options: RuleOptions): Rule | undefined {
  if (route === undefined) return undefined;
  if (method === 'OPTIONS') return OPEN;
  const octoprintPath = /^\/octoprint\/:target\/(.+)$/.exec(route)?.[1];
  if (octoprintPath !== undefined && OCTOPRINT_OPEN.has(octoprintPath)) return OPEN;
  const read = method === 'GET' || method === 'HEAD';
  if (read) {
    if (route === '/' || route === '/ping') return OPEN;
    // Static dashboard files are open; the API calls the dashboard makes need a key like any other.
    if (route === '/ui' || route === '/ui/' || route.startsWith('/ui/')) return OPEN;
    if (route === '/metrics') return options.metricsOpen ? OPEN : scope('read');
    if (route.startsWith('/keys')) return scope('admin');
    // Targets hold chat ids, addresses and URLs; the log shows what went where: both are the admin's.
    if (route.startsWith('/notifications')) return scope('admin');
    if (octoprintPath !== undefined && OCTOPRINT_HANDSHAKE.has(octoprintPath)) return KEY;
    if (octoprintPath === 'webcam/') return CAMERA;
    return scope('read');
  }
  if (method === 'POST' && octoprintPath !== undefined && OCTOPRINT_HANDSHAKE.has(octoprintPath)) {
    return KEY;
  }
  return WRITES[`${method} ${route}`] ?? scope('admin');
}

/** The scope a rule names in a 403, for the message. */
export function neededScope(rule: Rule): Scope | null {
  if (rule.kind === 'scope') return rule.scope;
  if (rule.kind === 'own-job') return 'print';
  if (rule.kind === 'camera') return 'read';
  return null;
}

/** Whether the actor may act on a job owned by `owner` (`own-job` routes): `control`, or `print` and owner. */
export function mayManageJob(actor: Actor, owner: string | null): boolean {
  if (allows(actor, 'control')) return true;
  return allows(actor, 'print') && actor.name !== null && owner === actor.name;
}
