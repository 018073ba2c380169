/**
 * The access settings the service runs with, decided once at start-up from `[server]` and the bind
 * address: whether keys are required, which origins may write, which may read, whether `/metrics` is open.
 */

import { hostname } from 'node:os';
import type { ServerSettings } from '../config/server-keys.js';
import { normaliseOrigin, type OriginPolicy } from './origins.js';

export interface AccessSettings {
  /** True when every request but the open ones needs a key. */
  keysRequired: boolean;
  metricsOpen: boolean;
  origins: OriginPolicy;
  /** Set when the settings deserve a warning in the log at start-up. */
  warning: string | null;
}

/** Whether `host` (the bind address) only accepts connections from this machine. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return (
    bare === 'localhost' || bare === '::1' || /^127(\.\d{1,3}){3}$/.test(bare) || bare === '::ffff:127.0.0.1'
  );
}

/**
 * Default: `off` on a loopback bind (the anchor's behaviour, and what its local clients expect), `keys`
 * on any other. Running without keys where the network can reach the port must be asked for in writing,
 * and is logged as a warning.
 */
export function resolveAccess(server: ServerSettings, bindHost: string): AccessSettings {
  const loopback = isLoopback(bindHost);
  const mode = server.auth ?? (loopback ? 'off' : 'keys');
  const warning =
    mode === 'off' && !loopback
      ? `[server] auth = "off" on ${bindHost}: anyone who can reach this port may start, stop and pause every machine`
      : null;
  const own = hostname().toLowerCase();
  const normalised = (list: readonly string[]) =>
    new Set(
      list.map((origin) => normaliseOrigin(origin)).filter((origin): origin is string => origin !== null),
    );
  return {
    keysRequired: mode === 'keys',
    metricsOpen: server.metrics_auth === 'open',
    origins: {
      allowed: normalised(server.allowed_origins),
      readOrigins: server.read_origins === '*' ? '*' : normalised(server.read_origins),
      ownHostNames: new Set([own, `${own}.local`]),
    },
    warning,
  };
}
