/**
 * The forge test harness: a real server on port 0 with a fresh temp data dir (and a fresh PostgreSQL
 * database of its own in the `forge-postgres` test project, see test-database.ts), the first
 * administrator created by the same code path `forge serve` uses, and fixture helpers that go through
 * the HTTP API itself.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import type { SignatureVerifier } from '../src/auth/context.js';
import { type ConfigFile, loadConfig } from '../src/config.js';
import { INITIAL_ADMIN_NAME, type RunningForge, startForge } from '../src/server.js';
import type { ServiceContext } from '../src/services/context.js';
import { createTestDatabase } from './test-database.js';

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  /** Parsed JSON, or the raw text when the body is not JSON (undefined when empty). */
  body: T;
  text: string;
}

export interface RequestOptions {
  /** Sent as `Authorization: token <t>`. */
  token?: string;
  /** Sent as HTTP Basic. */
  basic?: { username: string; password: string };
  body?: unknown;
  headers?: Record<string, string>;
}

export interface TestUser {
  id: number;
  username: string;
  password: string;
  email: string;
}

export interface TestForge {
  /** `http://127.0.0.1:<port>` */
  url: string;
  app: FastifyInstance;
  /** The app URL every `url` field and Link header starts with (ends in `/`). */
  appUrl: string;
  ctx: ServiceContext;
  admin: TestUser & { token: string };
  /** Lines printed by the server at start-up (the one-time administrator password among them). */
  printed: string[];
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON fields and assert them exactly.
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  /** Creates an active user through `POST /admin/users` (must_change_password false). */
  createUser(options?: {
    username?: string;
    email?: string;
    password?: string;
    visibility?: 'public' | 'limited' | 'private';
    restricted?: boolean;
    admin?: boolean;
    keepEmailPrivate?: boolean;
    fullName?: string;
  }): Promise<TestUser>;
  /** Creates a token through `POST /users/{u}/tokens` with Basic auth; returns the plain token. */
  createToken(
    user: Pick<TestUser, 'username' | 'password'>,
    scopes: string[],
    name?: string,
  ): Promise<string>;
  /** Creates an organization owned by the token's user through `POST /orgs`. */
  createOrg(
    token: string,
    options: {
      username?: string;
      visibility?: 'public' | 'limited' | 'private';
      repo_admin_change_team_access?: boolean;
      email?: string;
    },
  ): Promise<{ id: number; name: string }>;
  /** Creates a team through `POST /orgs/{org}/teams`. */
  createTeam(
    token: string,
    org: string,
    options: {
      name?: string;
      permission?: 'read' | 'write' | 'admin';
      units?: string[];
      units_map?: Record<string, string>;
    },
  ): Promise<{ id: number; name: string }>;
  /** Adds a user to a team through `PUT /teams/{id}/members/{username}`. */
  addTeamMember(token: string, teamId: number, username: string): Promise<void>;
  close(): Promise<void>;
}

let counter = 0;
/** A name unique within this test run. */
export function uniqueName(prefix = 'user'): string {
  counter += 1;
  return `${prefix}${counter}${randomBytes(3).toString('hex')}`;
}

export interface StartTestForgeOptions {
  /** Extra config-file keys (written to a TOML file and passed as --config). */
  config?: Partial<ConfigFile> & Record<string, unknown>;
  signatureVerifier?: SignatureVerifier;
  /** The server's logger (default: silent, or FORGE_TEST_LOG's level). */
  logger?: pino.Logger;
}

function toToml(config: Record<string, unknown>): string {
  const top: string[] = [];
  const tables: string[] = [];
  for (const [key, value] of Object.entries(config)) {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      tables.push(`[${key}]`, ...Object.entries(value).map(([k, v]) => `${k} = ${JSON.stringify(v)}`));
    } else {
      top.push(`${key} = ${JSON.stringify(value)}`);
    }
  }
  return [...top, ...tables].join('\n');
}

/** Starts a forge for one test file. Call `close()` in afterAll. */
export async function startTestForge(options: StartTestForgeOptions = {}): Promise<TestForge> {
  const dataDir = mkdtempSync(join(tmpdir(), 'forge-test-'));
  const database = await createTestDatabase(dataDir);
  let configFile: string | undefined;
  if (options.config) {
    configFile = join(dataDir, 'forge.toml');
    writeFileSync(configFile, toToml(options.config));
  }
  const config = loadConfig({
    bind: '127.0.0.1:0',
    dataDir,
    configFile,
    databaseUrl: database.url,
    // The `forge-nocache` project runs suites with FORGE_CACHE=off (every response cache off).
    env: { FORGE_CACHE: process.env.FORGE_CACHE },
  });
  const printed: string[] = [];
  let forge: RunningForge;
  try {
    forge = await startForge(config, {
      logger: options.logger ?? pino({ level: process.env.FORGE_TEST_LOG ?? 'silent' }),
      print: (line) => printed.push(line),
      signatureVerifier: options.signatureVerifier,
    });
  } catch (error) {
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const password = /password: (\S+)/.exec(printed.join('\n'))?.[1];
  if (!password)
    throw new Error(`the server did not print the administrator password: ${printed.join('\n')}`);

  const request = async <T>(
    method: string,
    path: string,
    opts: RequestOptions = {},
  ): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `token ${opts.token}`;
    if (opts.basic) {
      headers.authorization = `Basic ${Buffer.from(`${opts.basic.username}:${opts.basic.password}`).toString('base64')}`;
    }
    let body: string | undefined;
    if (opts.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    }
    const url = path.startsWith('http')
      ? path
      : `${forge.url}${path.startsWith('/api/') ? '' : '/api/v1'}${path}`;
    const response = await fetch(url, { method, headers, body });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = text;
    }
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  };

  const expectStatus = (response: ApiResponse, status: number, what: string) => {
    if (response.status !== status)
      throw new Error(`${what}: expected ${status}, got ${response.status} ${response.text}`);
  };

  const adminBasic = { username: INITIAL_ADMIN_NAME, password };
  const createToken = async (
    user: Pick<TestUser, 'username' | 'password'>,
    scopes: string[],
    name?: string,
  ) => {
    const response = await request<{ sha1: string }>('POST', `/users/${user.username}/tokens`, {
      basic: user,
      body: { name: name ?? uniqueName('token'), scopes },
    });
    expectStatus(response, 201, 'create token');
    return response.body.sha1;
  };
  const adminToken = await createToken(adminBasic, ['all'], 'harness-admin');
  const adminUser = await request<{ id: number; email: string }>('GET', '/user', { token: adminToken });

  const harness: TestForge = {
    url: forge.url,
    app: forge.app,
    get appUrl() {
      return config.appUrl;
    },
    ctx: forge.ctx,
    admin: {
      id: adminUser.body.id,
      username: INITIAL_ADMIN_NAME,
      password,
      email: adminUser.body.email,
      token: adminToken,
    },
    printed,
    request,
    async createUser(opts = {}) {
      const username = opts.username ?? uniqueName('user');
      const email = opts.email ?? `${username}@example.com`;
      const userPassword = opts.password ?? `pw-${randomBytes(6).toString('hex')}`;
      const created = await request<{ id: number }>('POST', '/admin/users', {
        token: adminToken,
        body: {
          username,
          email,
          password: userPassword,
          must_change_password: false,
          visibility: opts.visibility,
          restricted: opts.restricted,
          full_name: opts.fullName,
        },
      });
      expectStatus(created, 201, 'create user');
      if (opts.admin || opts.keepEmailPrivate) {
        const edited = await request('PATCH', `/admin/users/${username}`, {
          token: adminToken,
          body: { admin: opts.admin, keep_email_private: opts.keepEmailPrivate },
        });
        expectStatus(edited, 200, 'edit user');
      }
      return { id: created.body.id, username, password: userPassword, email };
    },
    createToken,
    async createOrg(token, opts) {
      const username = opts.username ?? uniqueName('org');
      const response = await request<{ id: number; name: string }>('POST', '/orgs', {
        token,
        body: {
          username,
          visibility: opts.visibility,
          repo_admin_change_team_access: opts.repo_admin_change_team_access,
          email: opts.email,
        },
      });
      expectStatus(response, 201, 'create org');
      return { id: response.body.id, name: response.body.name };
    },
    async createTeam(token, org, opts) {
      const response = await request<{ id: number; name: string }>('POST', `/orgs/${org}/teams`, {
        token,
        body: {
          name: opts.name ?? uniqueName('team'),
          permission: opts.permission ?? 'write',
          units: opts.units ?? (opts.units_map ? undefined : ['repo.code', 'repo.releases']),
          units_map: opts.units_map,
        },
      });
      expectStatus(response, 201, 'create team');
      return { id: response.body.id, name: response.body.name };
    },
    async addTeamMember(token, teamId, username) {
      expectStatus(
        await request('PUT', `/teams/${teamId}/members/${username}`, { token }),
        204,
        'add team member',
      );
    },
    async close() {
      await forge.close();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return harness;
}
