/** The HTTP-free access rules (src/access/), one test per rule. */

import { describe, expect, it } from 'vitest';
import { generateKey, parseKey, secretMatches } from '../src/access/key-secret.js';
import { classifyOrigin, corsOrigin, normaliseOrigin, type OriginPolicy } from '../src/access/origins.js';
import { ANONYMOUS, allows, mayManageJob, parseScopes, ruleFor } from '../src/access/scopes.js';
import { isLoopback, resolveAccess } from '../src/access/settings.js';
import type { ServerSettings } from '../src/config/server-keys.js';
import { parseConfig } from '../src/config.js';

const rules = { metricsOpen: false };

describe('scopes', () => {
  it('GET / and /ping, preflights and the static dashboard need no key', () => {
    for (const [method, route] of [
      ['GET', '/'],
      ['HEAD', '/ping'],
      ['OPTIONS', '/print'],
      ['GET', '/ui/'],
      ['GET', '/ui/assets/index.js'],
    ] as const) {
      expect(ruleFor(method, route, rules), `${method} ${route}`).toEqual({ kind: 'open' });
    }
  });

  it('every other GET needs read; /keys needs admin; /metrics follows metrics_auth', () => {
    expect(ruleFor('GET', '/machines/:id', rules)).toEqual({ kind: 'scope', scope: 'read' });
    expect(ruleFor('GET', '/events', rules)).toEqual({ kind: 'scope', scope: 'read' });
    expect(ruleFor('GET', '/keys', rules)).toEqual({ kind: 'scope', scope: 'admin' });
    expect(ruleFor('GET', '/metrics', rules)).toEqual({ kind: 'scope', scope: 'read' });
    expect(ruleFor('GET', '/metrics', { metricsOpen: true })).toEqual({ kind: 'open' });
  });

  it('print covers /print, /queue and uploads; control covers machine controls; own-job routes need either', () => {
    expect(ruleFor('POST', '/print', rules)).toEqual({ kind: 'scope', scope: 'print' });
    expect(ruleFor('POST', '/queue', rules)).toEqual({ kind: 'scope', scope: 'print' });
    expect(ruleFor('POST', '/octoprint/:target/api/files/local', rules)).toEqual({
      kind: 'scope',
      scope: 'print',
    });
    expect(ruleFor('POST', '/machines/:id/clear', rules)).toEqual({ kind: 'scope', scope: 'clear' });
    expect(ruleFor('POST', '/jobs/:id/requeue', rules)).toEqual({ kind: 'own-job' });
    expect(ruleFor('PATCH', '/jobs/:id', rules)).toEqual({ kind: 'own-job' });
  });

  it('the OctoPrint handshake takes any valid key', () => {
    expect(ruleFor('GET', '/octoprint/:target/api/version', rules)).toEqual({ kind: 'key' });
    expect(ruleFor('POST', '/octoprint/:target/api/login', rules)).toEqual({ kind: 'key' });
    expect(ruleFor('GET', '/octoprint/:target/api/printer', rules)).toEqual({ kind: 'scope', scope: 'read' });
  });

  it('OctoPrint apps: the app-key flow and the push channel are open, control needs control, webcams take a camera token', () => {
    for (const [method, path] of [
      ['GET', 'plugin/appkeys/probe'],
      ['POST', 'plugin/appkeys/request'],
      ['GET', 'plugin/appkeys/request/:token'],
      ['GET', 'sockjs/websocket'],
    ]) {
      expect(ruleFor(method as string, `/octoprint/:target/${path}`, rules), path).toEqual({ kind: 'open' });
    }
    for (const path of ['api/job', 'api/printer/tool', 'api/printer/bed', 'api/connection']) {
      expect(ruleFor('POST', `/octoprint/:target/${path}`, rules), path).toEqual({
        kind: 'scope',
        scope: 'control',
      });
    }
    expect(ruleFor('GET', '/octoprint/:target/webcam/', rules)).toEqual({ kind: 'camera' });
    expect(ruleFor('POST', '/octoprint/:target/api/system/commands/:source/:action', rules)).toEqual({
      kind: 'key',
    });
    expect(ruleFor('GET', '/keys/requests', rules)).toEqual({ kind: 'scope', scope: 'admin' });
    expect(ruleFor('POST', '/keys/requests/:id/approve', rules)).toEqual({ kind: 'scope', scope: 'admin' });
  });

  it('a write nobody classified needs admin (fail closed); unmatched requests have no rule', () => {
    expect(ruleFor('POST', '/something/new', rules)).toEqual({ kind: 'scope', scope: 'admin' });
    expect(ruleFor('POST', undefined, rules)).toBeUndefined();
  });

  it('admin implies every scope; the anonymous actor of auth = "off" may do everything', () => {
    const admin = { name: 'a', scopes: new Set(parseScopes(['admin'])) };
    for (const scope of ['read', 'print', 'control'] as const) expect(allows(admin, scope)).toBe(true);
    expect(allows({ name: 'r', scopes: new Set(parseScopes(['read'])) }, 'print')).toBe(false);
    expect(allows(ANONYMOUS, 'admin')).toBe(true);
  });

  it('a print key manages only its own jobs; control manages any', () => {
    const printer = { name: 'slicer', scopes: new Set(parseScopes(['print'])) };
    expect(mayManageJob(printer, 'slicer')).toBe(true);
    expect(mayManageJob(printer, 'other')).toBe(false);
    expect(mayManageJob(printer, null)).toBe(false);
    expect(mayManageJob({ name: 'ops', scopes: new Set(parseScopes(['control'])) }, 'other')).toBe(true);
  });

  it('scope lists are parsed strictly', () => {
    expect(parseScopes(['print', 'read', 'print'])).toEqual(['read', 'print']);
    expect(() => parseScopes(['write'])).toThrow('unknown scope "write"');
    expect(() => parseScopes([])).toThrow('at least one scope');
  });
});

describe('key secrets', () => {
  it('are 256 random bits behind a public id, stored as a hash, compared in constant time', () => {
    const key = generateKey();
    const parsed = parseKey(key.text);
    expect(parsed?.id).toBe(key.id);
    expect(key.hash).not.toContain(parsed?.secret);
    expect(Buffer.from(parsed?.secret ?? '', 'base64url')).toHaveLength(32);
    expect(secretMatches(parsed?.secret ?? '', key.hash)).toBe(true);
    expect(secretMatches(`${parsed?.secret.slice(0, -1)}x`, key.hash)).toBe(false);
    expect(secretMatches(parsed?.secret ?? '', undefined)).toBe(false);
    expect(parseKey('mapi_short')).toBeNull();
    expect(generateKey().text).not.toBe(key.text);
  });
});

describe('origins', () => {
  const policy: OriginPolicy = {
    allowed: new Set(['https://app.zoo.dev']),
    readOrigins: '*',
    ownHostNames: new Set(['farm-pi', 'farm-pi.local']),
  };

  it('a request without Origin is not a web page and is never refused', () => {
    expect(classifyOrigin(undefined, 'x:8080', policy)).toBe('none');
  });

  it('a listed origin may write; matching ignores case and default ports', () => {
    expect(classifyOrigin('https://APP.zoo.dev:443', 'farm-pi:8080', policy)).toBe('listed');
    expect(normaliseOrigin('https://app.zoo.dev/path')).toBeNull();
    expect(normaliseOrigin('app://Modeling-App')).toBe('app://modeling-app');
    expect(normaliseOrigin('null')).toBeNull();
    expect(normaliseOrigin('file:///home/x/index.html')).toBeNull();
    const desktop = { ...policy, allowed: new Set(['app://modeling-app']) };
    expect(classifyOrigin('app://modeling-app', 'farm-pi:8080', desktop)).toBe('listed');
  });

  it("the service's own origin counts only for IP, localhost or this computer's names (no DNS rebinding)", () => {
    expect(classifyOrigin('http://192.168.1.5:8080', '192.168.1.5:8080', policy)).toBe('own');
    expect(classifyOrigin('http://[::1]:8080', '[::1]:8080', policy)).toBe('own');
    expect(classifyOrigin('http://farm-pi.local:8080', 'farm-pi.local:8080', policy)).toBe('own');
    expect(classifyOrigin('http://rebind.example:8080', 'rebind.example:8080', policy)).toBe('foreign');
    expect(classifyOrigin('http://192.168.1.5:9999', '192.168.1.5:8080', policy)).toBe('foreign');
  });

  it('Origin: null and other origins are foreign', () => {
    expect(classifyOrigin('null', 'farm-pi:8080', policy)).toBe('foreign');
    expect(classifyOrigin('http://evil.example', 'farm-pi:8080', policy)).toBe('foreign');
  });

  it('CORS: reads open to read_origins, writes only to listed and own origins', () => {
    expect(corsOrigin('foreign', 'http://evil.example', false, policy)).toBe('*');
    expect(corsOrigin('foreign', 'http://evil.example', true, policy)).toBe(false);
    expect(corsOrigin('listed', 'https://app.zoo.dev', true, policy)).toBe('https://app.zoo.dev');
    const closed = { ...policy, readOrigins: new Set(['https://app.zoo.dev']) };
    expect(corsOrigin('foreign', 'http://evil.example', false, closed)).toBe(false);
  });
});

describe('[server] origins', () => {
  it('a configured origin that is not scheme://host[:port] stops start-up, naming the key', () => {
    expect(() =>
      parseConfig('[server]\nallowed_origins = ["https://app.zoo.dev/modeling"]\n', {
        file: '/etc/m.toml',
        backends: [],
      }),
    ).toThrow(
      '/etc/m.toml: [server] key "allowed_origins": expected web origins like "https://app.example.com" or "http://192.168.1.5:3000" (scheme, host, optional port; no path), got "https://app.zoo.dev/modeling"',
    );
  });
});

describe('auth default by bind address', () => {
  const server = (auth?: 'keys' | 'off'): ServerSettings => ({
    // The defaults of an empty [server] table, so the test follows keys other features add.
    ...parseConfig('', { file: 'machine-api.toml', backends: [] }).server,
    ...(auth ? { auth } : {}),
  });

  it('loopback → off, anything else → keys; off on a non-loopback bind warns', () => {
    for (const host of ['127.0.0.1', '::1', 'localhost', '127.1.2.3'])
      expect(isLoopback(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '192.168.1.5']) expect(isLoopback(host), host).toBe(false);
    expect(resolveAccess(server(), '127.0.0.1')).toMatchObject({ keysRequired: false, warning: null });
    expect(resolveAccess(server(), '0.0.0.0')).toMatchObject({ keysRequired: true, warning: null });
    expect(resolveAccess(server('off'), '0.0.0.0').warning).toContain('[server] auth = "off" on 0.0.0.0');
    expect(resolveAccess(server('keys'), '127.0.0.1').keysRequired).toBe(true);
  });
});
