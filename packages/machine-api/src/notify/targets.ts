/**
 * The rules of a notification target, HTTP-free: what each kind needs, which field is its secret, what
 * the API may show, and how a PATCH applies. The configuration file and the API both go through
 * `checkTarget`, so a target is judged the same whichever way it was defined.
 */

import { existsSync } from 'node:fs';
import type { NewNotificationTarget, NotificationTargetView, TargetKind } from './schemas.js';

export type TargetSettings = NewNotificationTarget;
/** A PATCH body: any field, or `null` to remove an optional one. */
export type TargetPatch = { [K in keyof TargetSettings]?: TargetSettings[K] | null };

/** A stored target. */
export interface Target {
  id: string;
  source: 'config' | 'api';
  settings: TargetSettings;
  createdAt: string;
  updatedAt: string;
}

/** The field holding each kind's secret; it is never logged and never returned. */
export const SECRET_FIELD: Record<TargetKind, keyof TargetSettings> = {
  webhook: 'secret',
  ntfy: 'token',
  discord: 'url',
  telegram: 'bot_token',
  email: 'password',
};

/** Keys each kind reads; any other kind-specific key is refused, so a typo never passes silently. */
const KIND_KEYS: Record<TargetKind, readonly (keyof TargetSettings)[]> = {
  webhook: ['url', 'secret'],
  ntfy: ['url', 'token'],
  discord: ['url'],
  telegram: ['bot_token', 'chat_id', 'url'],
  email: ['host', 'port', 'tls', 'ca_file', 'username', 'password', 'from', 'to'],
};
const REQUIRED_KEYS: Record<TargetKind, readonly (keyof TargetSettings)[]> = {
  webhook: ['url', 'secret'],
  ntfy: ['url'],
  discord: ['url'],
  telegram: ['bot_token', 'chat_id'],
  email: ['host', 'from', 'to'],
};
const KIND_SPECIFIC = new Set(Object.values(KIND_KEYS).flat());

export const DEFAULTS = { timeout_seconds: 10, max_attempts: 10, retry_seconds: 10 } as const;

/** Why `settings` cannot be used (one sentence naming the key), or null when they can. */
export function targetProblem(settings: TargetSettings): string | null {
  const { kind } = settings;
  for (const key of Object.keys(settings) as (keyof TargetSettings)[]) {
    if (KIND_SPECIFIC.has(key) && !KIND_KEYS[kind].includes(key)) {
      return `key "${key}" does not apply to kind "${kind}" (it takes ${KIND_KEYS[kind].join(', ')})`;
    }
  }
  for (const key of REQUIRED_KEYS[kind]) {
    if (settings[key] === undefined) return `kind "${kind}" needs key "${key}"`;
  }
  if (settings.url !== undefined) {
    const problem = urlProblem(settings.url, kind);
    if (problem) return problem;
  }
  if (kind === 'webhook' && !/^whsec_[A-Za-z0-9+/]{32,}={0,2}$/.test(settings.secret ?? '')) {
    return 'key "secret": expected a Standard Webhooks secret, "whsec_" followed by at least 24 bytes in base64';
  }
  if (settings.quiet_hours) {
    const { timezone, start, end } = settings.quiet_hours;
    if (!validTimeZone(timezone))
      return `key "quiet_hours.timezone": expected an IANA time zone such as "Europe/Berlin"`;
    if (start === end) return 'key "quiet_hours": start and end must differ';
  }
  if (kind === 'email') {
    for (const address of [settings.from ?? '', ...(settings.to ?? [])]) {
      if (!/^[^\s@<>",;]+@[^\s@<>",;]+$/.test(address))
        return `key "from"/"to": expected e-mail addresses like ops@example.com`;
    }
    if ((settings.username === undefined) !== (settings.password === undefined)) {
      return 'kind "email" needs both "username" and "password", or neither';
    }
    if (settings.ca_file !== undefined && !existsSync(settings.ca_file)) {
      return `key "ca_file": no such file`;
    }
  }
  return null;
}

function urlProblem(text: string, kind: TargetKind): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // Never echo the value: a Discord URL is a secret.
    return 'key "url": expected an absolute http:// or https:// URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return 'key "url": expected an http:// or https:// URL';
  if (url.username || url.password)
    return 'key "url": credentials in the URL are not accepted; use the kind\'s token key';
  if (kind === 'ntfy' && url.pathname.replace(/\/+$/, '') === '')
    return 'key "url": expected the topic URL, e.g. https://ntfy.sh/my-printers';
  return null;
}

function validTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** `current` with `patch` applied (`null` removes); the kind's secret is kept unless the patch sets one. */
export function patched(current: TargetSettings, patch: TargetPatch): TargetSettings {
  const next: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete next[key];
    else if (value !== undefined) next[key] = value;
  }
  // A new kind does not inherit the old kind's keys.
  if (patch.kind !== undefined && patch.kind !== current.kind) {
    for (const key of KIND_KEYS[current.kind]) if (!(key in patch)) delete next[key];
  }
  return next as TargetSettings;
}

/** The API's view of a target: every setting but the secret, which is only said to be set. */
export function publicView(target: Target): NotificationTargetView {
  const s = target.settings;
  const secretField = SECRET_FIELD[s.kind];
  const shown = <K extends keyof TargetSettings>(key: K) =>
    s[key] !== undefined && key !== secretField ? { [key]: s[key] } : {};
  return {
    id: target.id,
    name: s.name,
    kind: s.kind,
    source: target.source,
    enabled: s.enabled ?? true,
    events: s.events ?? null,
    machines: s.machines ?? null,
    quiet_hours: s.quiet_hours ?? null,
    burst: s.burst ?? null,
    timeout_seconds: s.timeout_seconds ?? DEFAULTS.timeout_seconds,
    max_attempts: s.max_attempts ?? DEFAULTS.max_attempts,
    retry_seconds: s.retry_seconds ?? DEFAULTS.retry_seconds,
    ...shown('url'),
    ...shown('chat_id'),
    ...shown('host'),
    ...shown('port'),
    ...shown('tls'),
    ...shown('username'),
    ...shown('from'),
    ...shown('to'),
    secret_set: s[secretField] !== undefined,
    created_at: target.createdAt,
    updated_at: target.updatedAt,
  } as NotificationTargetView;
}

/** Every secret value of a target, to scrub from error messages before they are recorded. */
export function secretsOf(settings: TargetSettings): string[] {
  const values = [settings.secret, settings.token, settings.bot_token, settings.password];
  if (settings.kind === 'discord') values.push(settings.url);
  return values.filter((value): value is string => typeof value === 'string' && value.length > 0);
}

/** `text` with every secret of the target replaced by `***` (and any URL path after a bot token). */
export function scrubbed(text: string, settings: TargetSettings): string {
  let out = text;
  for (const secret of secretsOf(settings)) out = out.split(secret).join('***');
  if (settings.kind === 'discord') out = out.replace(/\/api\/webhooks\/[^\s"']+/g, '/api/webhooks/***');
  return out.replace(/\/bot[^/\s"']+/g, '/bot***');
}
