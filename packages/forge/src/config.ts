import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { type Static, Type } from 'typebox';
import { Value } from 'typebox/value';
import { parseHostAllowList } from './webhooks/host-allow-list.js';

/** The TOML config file (every key optional; flags and FORGE_DATABASE_URL override it). */
export const ConfigFileSchema = Type.Object(
  {
    bind: Type.Optional(Type.String()),
    data_dir: Type.Optional(Type.String()),
    app_url: Type.Optional(Type.String()),
    database_url: Type.Optional(Type.String()),
    log_level: Type.Optional(
      Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l))),
    ),
    security: Type.Optional(
      Type.Object(
        { disable_query_auth_token: Type.Optional(Type.Boolean()) },
        { additionalProperties: false },
      ),
    ),
    api: Type.Optional(
      Type.Object(
        {
          default_paging_num: Type.Optional(Type.Integer({ minimum: 1 })),
          max_response_items: Type.Optional(Type.Integer({ minimum: 1 })),
        },
        { additionalProperties: false },
      ),
    ),
    service: Type.Optional(
      Type.Object(
        {
          no_reply_address: Type.Optional(Type.String()),
          register_email_confirm: Type.Optional(Type.Boolean()),
          require_signin_view: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
    ),
    attachment: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean()),
          /** Largest accepted file in MiB (Gitea's MAX_SIZE). */
          max_size: Type.Optional(Type.Integer({ minimum: 0 })),
          /** Comma-separated extensions (`.zip`), MIME types (`image/png`) or wildcards (`image/*`); empty allows all. */
          allowed_types: Type.Optional(Type.String()),
        },
        { additionalProperties: false },
      ),
    ),
    server: Type.Optional(
      Type.Object(
        { ssh_trusted_user_ca_keys: Type.Optional(Type.Array(Type.String())) },
        { additionalProperties: false },
      ),
    ),
    cache: Type.Optional(
      Type.Object(
        {
          /** Every response cache (kept answers, token lookups, heatmaps, identicons); see cache/read-view.ts. */
          enabled: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
    ),
    metrics: Type.Optional(
      Type.Object(
        {
          /** Gitea's [metrics] ENABLED: serve Prometheus metrics at `/metrics` (off by default). */
          enabled: Type.Optional(Type.Boolean()),
          /** Gitea's [metrics] TOKEN: when set, scrapers send `Authorization: Bearer <token>`. */
          token: Type.Optional(Type.String({ maxLength: 1024 })),
        },
        { additionalProperties: false },
      ),
    ),
    webhook: Type.Optional(
      Type.Object(
        {
          /** Gitea's ALLOWED_HOST_LIST: `external` (default), `loopback`, `private`, `*`, CIDRs, host globs. */
          allowed_host_list: Type.Optional(Type.String()),
          skip_tls_verify: Type.Optional(Type.Boolean()),
          /** Seconds one delivery attempt may take (Gitea's DELIVER_TIMEOUT). */
          deliver_timeout: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 600 })),
          /** Attempts per delivery before it is given up (the first one included). */
          max_attempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 30 })),
          /** Delay before the first retry in seconds; later retries grow from it (about a day for 8 attempts). */
          retry_base_delay: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 3600 })),
          /** Deactivate a hook after this many consecutive failed deliveries (0: never). */
          disable_after_failures: Type.Optional(Type.Integer({ minimum: 0 })),
          /** Days a finished delivery stays in the history (0: forever). */
          history_retention_days: Type.Optional(Type.Integer({ minimum: 0 })),
          /** Seconds between looks at the outbox for deliveries other processes raised. */
          poll_interval: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 600 })),
          /**
           * Seconds a process serving a push holds its pending events before another may repair them
           * (webhooks/ref-journal.ts); the holder renews it three times per period while the push runs.
           */
          push_lease: Type.Optional(Type.Number({ minimum: 0.3, maximum: 3600 })),
        },
        { additionalProperties: false },
      ),
    ),
    oauth2: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean()),
          access_token_expiration_time: Type.Optional(Type.Integer({ minimum: 1 })),
          refresh_token_expiration_time: Type.Optional(Type.Integer({ minimum: 1 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type ConfigFile = Static<typeof ConfigFileSchema>;

/** Everything the forge reads from its configuration, parsed and validated once at start-up. */
export interface ForgeConfig {
  bind: { host: string; port: number };
  dataDir: string;
  /** Public base URL ending in `/`; every `url`/`html_url` field and Link header starts with it. */
  appUrl: string;
  /** The app URL was derived from the bind address (so it follows the real port when binding port 0). */
  appUrlFromBind: boolean;
  databaseUrl: string;
  logLevel: string;
  security: { disableQueryAuthToken: boolean };
  api: { defaultPagingNum: number; maxResponseItems: number };
  service: { noReplyAddress: string; registerEmailConfirm: boolean; requireSignInView: boolean };
  server: { sshTrustedUserCaKeys: string[] };
  /** Release attachments: Gitea's `[attachment]` ENABLED, MAX_SIZE (here in bytes), ALLOWED_TYPES. */
  attachment: { enabled: boolean; maxSizeBytes: number; allowedTypes: string };
  /** Gitea's [oauth2]: access-token lifetime in seconds, refresh-token lifetime in hours. */
  oauth2: { enabled: boolean; accessTokenExpirationTime: number; refreshTokenExpirationTime: number };
  /** The one switch of every response cache (`[cache] enabled`, FORGE_CACHE=on|off). */
  cache: { enabled: boolean };
  /** Prometheus metrics at `/metrics` (`[metrics]`, as Gitea's): off unless enabled; '' = no token. */
  metrics: { enabled: boolean; token: string };
  /** Outgoing webhooks (`[webhook]`); durations in milliseconds. */
  webhook: {
    allowedHostList: string;
    skipTlsVerify: boolean;
    deliverTimeoutMs: number;
    maxAttempts: number;
    retryBaseDelayMs: number;
    disableAfterFailures: number;
    historyRetentionDays: number;
    pollIntervalMs: number;
    pushLeaseMs: number;
  };
}

export interface ConfigSources {
  bind?: string;
  dataDir?: string;
  appUrl?: string;
  configFile?: string;
  databaseUrl?: string;
  /** The process environment (FORGE_DATABASE_URL, FORGE_CACHE and LOG_LEVEL are read). */
  env?: Record<string, string | undefined>;
}

/** Splits `HOST:PORT` (IPv6 hosts in brackets). */
export function parseBind(bind: string): { host: string; port: number } {
  const match = /^(?:\[(?<v6>[^\]]+)\]|(?<host>[^:]+)):(?<port>\d{1,5})$/.exec(bind);
  const port = Number(match?.groups?.port);
  if (!match || port > 65535) throw new Error(`bind: expected HOST:PORT, got "${bind}"`);
  return { host: match.groups?.v6 ?? match.groups?.host ?? '127.0.0.1', port };
}

/** Reads and validates a TOML config file; errors name the file, the key and what was expected. */
export function readConfigFile(path: string): ConfigFile {
  let raw: unknown;
  try {
    raw = parseToml(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`config ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const [first] = Value.Errors(ConfigFileSchema, raw);
  if (first) {
    const key = first.instancePath.replace(/^\//, '').replaceAll('/', '.') || '(root)';
    throw new Error(`config ${path}: key "${key}": ${first.message}`);
  }
  return raw as ConfigFile;
}

/** FORGE_CACHE: `on` or `off` overrides `[cache] enabled` (tests run the suites both ways). */
function cacheSwitch(env: Record<string, string | undefined> | undefined): boolean | undefined {
  const value = env?.FORGE_CACHE;
  if (value === undefined || value === '') return undefined;
  if (value === 'on' || value === 'off') return value === 'on';
  throw new Error(`FORGE_CACHE: expected "on" or "off", got "${value}"`);
}

/** Merges defaults < config file < environment < command-line flags into one typed config. */
export function loadConfig(sources: ConfigSources): ForgeConfig {
  const file = sources.configFile ? readConfigFile(sources.configFile) : {};
  const bindText = sources.bind ?? file.bind ?? '127.0.0.1:3000';
  const bind = parseBind(bindText);
  const dataDir = resolve(sources.dataDir ?? file.data_dir ?? './data');
  const explicitAppUrl = sources.appUrl ?? file.app_url;
  let appUrl = explicitAppUrl ?? `http://${bindText}/`;
  try {
    appUrl = new URL(appUrl).href;
  } catch {
    throw new Error(`app-url: expected an absolute http(s) URL, got "${appUrl}"`);
  }
  if (!appUrl.endsWith('/')) appUrl += '/';
  const databaseUrl =
    sources.databaseUrl ??
    (sources.env?.FORGE_DATABASE_URL || undefined) ??
    file.database_url ??
    `sqlite:${join(dataDir, 'forge.db')}`;
  const defaultPagingNum = file.api?.default_paging_num ?? 30;
  const allowedHostList = file.webhook?.allowed_host_list ?? 'external';
  try {
    parseHostAllowList(allowedHostList);
  } catch (error) {
    throw new Error(
      `config ${sources.configFile}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return {
    bind,
    dataDir,
    appUrl,
    appUrlFromBind: explicitAppUrl === undefined,
    databaseUrl,
    logLevel: file.log_level ?? (sources.env?.LOG_LEVEL || 'info'),
    security: { disableQueryAuthToken: file.security?.disable_query_auth_token ?? false },
    api: {
      defaultPagingNum,
      maxResponseItems: Math.max(file.api?.max_response_items ?? 50, 1),
    },
    service: {
      noReplyAddress: file.service?.no_reply_address ?? `noreply.${new URL(appUrl).hostname}`,
      registerEmailConfirm: file.service?.register_email_confirm ?? false,
      requireSignInView: file.service?.require_signin_view ?? false,
    },
    server: { sshTrustedUserCaKeys: file.server?.ssh_trusted_user_ca_keys ?? [] },
    attachment: {
      enabled: file.attachment?.enabled ?? true,
      maxSizeBytes: (file.attachment?.max_size ?? 2048) * 1024 * 1024,
      allowedTypes: file.attachment?.allowed_types ?? '',
    },
    webhook: {
      allowedHostList,
      skipTlsVerify: file.webhook?.skip_tls_verify ?? false,
      deliverTimeoutMs: (file.webhook?.deliver_timeout ?? 5) * 1000,
      maxAttempts: file.webhook?.max_attempts ?? 8,
      retryBaseDelayMs: (file.webhook?.retry_base_delay ?? 10) * 1000,
      disableAfterFailures: file.webhook?.disable_after_failures ?? 0,
      historyRetentionDays: file.webhook?.history_retention_days ?? 30,
      pollIntervalMs: (file.webhook?.poll_interval ?? 1) * 1000,
      pushLeaseMs: (file.webhook?.push_lease ?? 30) * 1000,
    },
    oauth2: {
      enabled: file.oauth2?.enabled ?? true,
      accessTokenExpirationTime: file.oauth2?.access_token_expiration_time ?? 3600,
      refreshTokenExpirationTime: file.oauth2?.refresh_token_expiration_time ?? 730,
    },
    cache: { enabled: cacheSwitch(sources.env) ?? file.cache?.enabled ?? true },
    metrics: { enabled: file.metrics?.enabled ?? false, token: file.metrics?.token ?? '' },
  };
}
