/**
 * The read-after-write matrix of issue 35: every kind of credential against every kind of change, each
 * combination raced by concurrent readers (read-after-write.ts). It runs against one forge (SQLite) or
 * several processes on one PostgreSQL database (writes on the first, reads spread over all): every
 * read sent after a write's answer arrived must reflect the write.
 */
import { randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';
import { describe, expect, it } from 'vitest';
import { checkFreshReads, type Round } from './read-after-write.js';
import { generateKey, signatureHeader, type TestKey, unixNow } from './ssh-signing.js';

/** The forge(s) under test. */
export interface FreshnessTarget {
  /** Base URLs (`http://host:port`); writes go to the first, reads to any. */
  urls: string[];
  admin: { username: string; password: string; token: string };
  /** A scratch directory for ssh keys. */
  dir: string;
}

export const CREDENTIALS = [
  'anonymous',
  'token',
  'basic-password',
  'basic-token',
  'oauth2',
  'signature',
] as const;
export type CredentialKind = (typeof CREDENTIALS)[number];

interface User {
  id: number;
  username: string;
  password: string;
}

/** A caller: who it is and the headers that authenticate one request as it. */
interface Caller {
  user: User | null;
  headers(method: string, pathAndQuery: string): Record<string, string>;
  /** Takes the credential away (token or grant revoked, key deleted, password changed). */
  revoke(): Promise<void>;
}

const basic = (username: string, password: string) =>
  `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;

/** A name no other test of the run uses. */
const unique = (prefix: string) => `${prefix}${randomBytes(5).toString('hex')}`;

/** The HTTP side of the matrix: requests, fixtures and callers of each kind. */
class Client {
  constructor(private readonly target: FreshnessTarget) {}

  get adminToken(): string {
    return this.target.admin.token;
  }

  async call(
    method: string,
    path: string,
    options: { headers?: Record<string, string>; body?: unknown; url?: string } = {},
  ) {
    const headers: Record<string, string> = { ...options.headers };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const base = options.url ?? this.target.urls[0]!;
    const response = await fetch(`${base}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      redirect: 'manual',
    });
    const text = await response.text();
    // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON fields.
    let body: any;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = text;
    }
    return { status: response.status, body, text, response };
  }

  /** A write as the administrator; throws unless it answered `status`. */
  async admin(method: string, path: string, body: unknown, status: number) {
    const answer = await this.call(method, `/api/v1${path}`, {
      headers: { authorization: `token ${this.target.admin.token}` },
      body,
    });
    if (answer.status !== status) throw new Error(`${method} ${path}: ${answer.status} ${answer.text}`);
    return answer.body;
  }

  /** A read as `caller`, on any of the processes. */
  async read(caller: Caller, path: string) {
    const urls = this.target.urls;
    const url = urls[Math.floor(Math.random() * urls.length)]!;
    const full = `/api/v1${path}`;
    return this.call('GET', full, { url, headers: caller.headers('GET', full) });
  }

  async createUser(options: { visibility?: string } = {}): Promise<User> {
    const username = unique('fresh');
    const password = `pw-${randomBytes(6).toString('hex')}`;
    const created = await this.admin(
      'POST',
      '/admin/users',
      {
        username,
        email: `${username}@example.com`,
        password,
        must_change_password: false,
        visibility: options.visibility,
      },
      201,
    );
    return { id: created.id, username, password };
  }

  async createToken(user: User, name = unique('token')): Promise<string> {
    const answer = await this.call('POST', `/api/v1/users/${user.username}/tokens`, {
      headers: { authorization: basic(user.username, user.password) },
      body: { name, scopes: ['read:user', 'write:repository', 'write:user'] },
    });
    if (answer.status !== 201) throw new Error(`create token: ${answer.status} ${answer.text}`);
    return answer.body.sha1;
  }

  /** A caller of `kind`, as `user` (a fresh user when omitted; none for anonymous callers). */
  async caller(kind: CredentialKind, given?: User): Promise<Caller> {
    if (kind === 'anonymous') return { user: null, headers: () => ({}), revoke: async () => {} };
    const user = given ?? (await this.createUser());
    const asUser = basic(user.username, user.password);
    if (kind === 'basic-password') {
      return {
        user,
        headers: () => ({ authorization: basic(user.username, user.password) }),
        revoke: async () => {
          await this.admin(
            'PATCH',
            `/admin/users/${user.username}`,
            { password: `new-${user.password}` },
            200,
          );
        },
      };
    }
    if (kind === 'token' || kind === 'basic-token') {
      const name = unique('token');
      const token = await this.createToken(user, name);
      const header = kind === 'token' ? `token ${token}` : basic(token, 'x-oauth-basic');
      return {
        user,
        headers: () => ({ authorization: header }),
        revoke: async () => {
          const gone = await this.call('DELETE', `/api/v1/users/${user.username}/tokens/${name}`, {
            headers: { authorization: asUser },
          });
          if (gone.status !== 204) throw new Error(`delete token: ${gone.status} ${gone.text}`);
        },
      };
    }
    if (kind === 'oauth2') return this.oauthCaller(user);
    return this.signatureCaller(user);
  }

  private async signatureCaller(user: User): Promise<Caller> {
    const key: TestKey = await generateKey(this.target.dir, 'ed25519');
    const token = await this.createToken(user);
    const added = await this.call('POST', '/api/v1/user/keys', {
      headers: { authorization: `token ${token}` },
      body: { title: unique('key'), key: key.publicLine },
    });
    if (added.status !== 201) throw new Error(`add key: ${added.status} ${added.text}`);
    return {
      user,
      headers: (method, target) => {
        const now = unixNow();
        const signature = signatureHeader({
          method,
          target,
          headers: {},
          key,
          keyId: key.fingerprint,
          algorithm: 'hs2019',
          signed: ['(request-target)', '(created)', '(expires)'],
          created: now,
          expires: now + 30,
        });
        return { signature };
      },
      revoke: async () => {
        const gone = await this.call('DELETE', `/api/v1/user/keys/${added.body.id}`, {
          headers: { authorization: `token ${token}` },
        });
        if (gone.status !== 204) throw new Error(`delete key: ${gone.status} ${gone.text}`);
      },
    };
  }

  /** Registers an OAuth2 application of `user`'s, signs in, consents and exchanges the code. */
  private async oauthCaller(user: User): Promise<Caller> {
    const token = await this.createToken(user);
    const base = this.target.urls[0]!;
    const callback = 'http://127.0.0.1:1/cb';
    const registered = await this.call('POST', '/api/v1/user/applications/oauth2', {
      headers: { authorization: `token ${token}` },
      body: { name: unique('app'), redirect_uris: [callback] },
    });
    if (registered.status !== 201) throw new Error(`register app: ${registered.status} ${registered.text}`);
    const app = registered.body as { id: number; client_id: string };
    const cookies = new Map<string, string>();
    const browse = async (path: string, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      if (cookies.size) headers.set('cookie', [...cookies].map(([n, v]) => `${n}=${v}`).join('; '));
      const response = await fetch(path.startsWith('http') ? path : `${base}${path}`, {
        ...init,
        headers,
        redirect: 'manual',
      });
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const eq = pair!.indexOf('=');
        cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
      }
      return response;
    };
    const submit = (path: string, html: string, extra: Record<string, string>) => {
      const fields = Object.fromEntries(
        [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [
          m[1]!,
          m[2]!.replaceAll('&amp;', '&').replaceAll('&quot;', '"').replaceAll('&#39;', "'"),
        ]),
      );
      return browse(path, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...fields, ...extra }),
      });
    };
    const signIn = await submit('/user/login', await (await browse('/user/login')).text(), {
      user_name: user.username,
      password: user.password,
    });
    if (signIn.status !== 303) throw new Error(`sign in: ${signIn.status}`);
    const verifier = oidc.randomPKCECodeVerifier();
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: app.client_id,
      redirect_uri: callback,
      scope: 'read:user read:repository',
      state: 's',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const consent = await browse(`/login/oauth/authorize?${query}`);
    if (consent.status !== 200) throw new Error(`authorize: ${consent.status}`);
    const granted = await submit('/login/oauth/grant', await consent.text(), { granted: 'true' });
    const code = new URL(granted.headers.get('location')!).searchParams.get('code')!;
    const exchanged = await fetch(`${base}/login/oauth/access_token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: callback,
        client_id: app.client_id,
        code_verifier: verifier,
      }),
    });
    if (exchanged.status !== 200) throw new Error(`token exchange: ${exchanged.status}`);
    const accessToken = ((await exchanged.json()) as { access_token: string }).access_token;
    return {
      user,
      headers: () => ({ authorization: `Bearer ${accessToken}` }),
      revoke: async () => {
        const gone = await this.call('DELETE', `/api/v1/user/applications/oauth2/${app.id}`, {
          headers: { authorization: `token ${token}` },
        });
        if (gone.status !== 204) throw new Error(`delete app: ${gone.status} ${gone.text}`);
      },
    };
  }

  /** A repository of `owner` (a user's, or an organization's with `org`) with release v1. */
  async repoWithRelease(ownerToken: string, options: { private?: boolean; org?: string } = {}) {
    const name = unique('repo');
    const created = await this.call(
      'POST',
      options.org ? `/api/v1/orgs/${options.org}/repos` : '/api/v1/user/repos',
      {
        headers: { authorization: `token ${ownerToken}` },
        body: { name, private: options.private ?? false, auto_init: true },
      },
    );
    if (created.status !== 201) throw new Error(`create repo: ${created.status} ${created.text}`);
    const path = `/repos/${created.body.owner.login}/${name}`;
    const release = await this.call('POST', `/api/v1${path}/releases`, {
      headers: { authorization: `token ${this.target.admin.token}` },
      body: { tag_name: 'v1', name: 'first' },
    });
    if (release.status !== 201) throw new Error(`create release: ${release.status} ${release.text}`);
    return { path, releaseId: release.body.id as number };
  }
}

/** One kind of change: the rounds it runs for a caller of `kind`. */
type Change = (
  client: Client,
  kind: CredentialKind,
) => Promise<{ rounds: number; prepare: (round: number) => Promise<Round> }>;

/** Changes that concern a signed-in caller's own credential, account or grants: not anonymous ones. */
const SIGNED_IN_ONLY = new Set([
  'credential revoked or deleted',
  'collaborator removed (and added again)',
  'team membership removed (and added again)',
  'user restricted (and unrestricted)',
  'user made admin (and demoted)',
  'prohibit_login set (and cleared)',
]);

const status = async (answer: Promise<{ status: number }>) => String((await answer).status);
/** The status a caller gets once its credential or account is gone (Gitea's 401 for every method). */
const GONE = '401';

/** The kinds of change of issue 35, each with what a caller reads to see it. */
export const CHANGES: Record<string, Change> = {
  'credential revoked or deleted': async (client, kind) => {
    const subject = await client.createUser();
    return {
      rounds: 1,
      prepare: async () => {
        const caller = await client.caller(kind);
        return {
          read: () => status(client.read(caller, `/users/${subject.username}`)),
          write: () => caller.revoke(),
          after: GONE,
        };
      },
    };
  },
  'repository made private (and public again)': async (client, kind) => {
    const owner = await client.createUser();
    const repo = await client.repoWithRelease(await client.createToken(owner));
    const caller = await client.caller(kind);
    return {
      rounds: 2,
      prepare: async (round) => ({
        read: () => status(client.read(caller, `${repo.path}/releases/latest`)),
        write: () => client.admin('PATCH', repo.path, { private: round % 2 === 0 }, 200),
        after: round % 2 === 0 ? '404' : '200',
      }),
    };
  },
  'collaborator removed (and added again)': async (client, kind) => {
    const owner = await client.createUser();
    const repo = await client.repoWithRelease(await client.createToken(owner), { private: true });
    const caller = await client.caller(kind);
    const collaborator = `${repo.path}/collaborators/${caller.user!.username}`;
    await client.admin('PUT', collaborator, { permission: 'read' }, 204);
    return {
      rounds: 2,
      prepare: async (round) => ({
        read: () => status(client.read(caller, `${repo.path}/releases?limit=1`)),
        write: () =>
          round % 2 === 0
            ? client.admin('DELETE', collaborator, undefined, 204)
            : client.admin('PUT', collaborator, { permission: 'read' }, 204),
        after: round % 2 === 0 ? '404' : '200',
      }),
    };
  },
  'team membership removed (and added again)': async (client, kind) => {
    const org = await client.admin('POST', '/orgs', { username: unique('org') }, 201);
    const repo = await client.repoWithRelease(client.adminToken, { private: true, org: org.name });
    const team = await client.admin(
      'POST',
      `/orgs/${org.name}/teams`,
      { name: unique('team'), permission: 'read', units: ['repo.code', 'repo.releases'] },
      201,
    );
    await client.admin('PUT', `${repo.path}/teams/${team.name}`, undefined, 204);
    const caller = await client.caller(kind);
    const member = `/teams/${team.id}/members/${caller.user!.username}`;
    await client.admin('PUT', member, undefined, 204);
    return {
      rounds: 2,
      prepare: async (round) => ({
        read: () => status(client.read(caller, `${repo.path}/releases/latest`)),
        write: () => client.admin(round % 2 === 0 ? 'DELETE' : 'PUT', member, undefined, 204),
        after: round % 2 === 0 ? '404' : '200',
      }),
    };
  },
  'release edited': async (client, kind) => {
    const owner = await client.createUser();
    const repo = await client.repoWithRelease(await client.createToken(owner));
    const caller = await client.caller(kind);
    return {
      rounds: 2,
      prepare: async (round) => ({
        read: async () => {
          const answer = await client.read(caller, `${repo.path}/releases/latest`);
          return `${answer.status} ${answer.body?.name}`;
        },
        write: () =>
          client.admin('PATCH', `${repo.path}/releases/${repo.releaseId}`, { name: `name ${round}` }, 200),
        after: `200 name ${round}`,
      }),
    };
  },
  'release made draft (and published again)': async (client, kind) => {
    const owner = await client.createUser();
    const repo = await client.repoWithRelease(await client.createToken(owner));
    const caller = await client.caller(kind);
    return {
      rounds: 2,
      prepare: async (round) => ({
        read: async () => {
          const list = await client.read(caller, `${repo.path}/releases?limit=1`);
          return `${list.status} ${list.body?.length}`;
        },
        write: () =>
          client.admin('PATCH', `${repo.path}/releases/${repo.releaseId}`, { draft: round % 2 === 0 }, 200),
        after: round % 2 === 0 ? '200 0' : '200 1',
      }),
    };
  },
  'release deleted': async (client, kind) => {
    const owner = await client.createUser();
    const repo = await client.repoWithRelease(await client.createToken(owner));
    const caller = await client.caller(kind);
    return {
      rounds: 1,
      prepare: async () => ({
        read: () => status(client.read(caller, `${repo.path}/releases/latest`)),
        write: () => client.admin('DELETE', `${repo.path}/releases/${repo.releaseId}`, undefined, 204),
        after: '404',
      }),
    };
  },
  'user visibility changed': async (client, kind) => {
    // Anonymous callers read someone else; everyone else reads themselves.
    const caller = await client.caller(kind);
    const subject = caller.user ?? (await client.createUser());
    const visibilities = ['private', 'limited', 'public'];
    return {
      rounds: 3,
      prepare: async (round) => {
        const visibility = visibilities[round % 3]!;
        return {
          read: async () => {
            const answer = await client.read(caller, `/users/${subject.username}`);
            return answer.status === 200 ? `200 ${answer.body.visibility}` : String(answer.status);
          },
          write: () => client.admin('PATCH', `/admin/users/${subject.username}`, { visibility }, 200),
          after: caller.user || visibility === 'public' ? `200 ${visibility}` : '404',
        };
      },
    };
  },
  'user restricted (and unrestricted)': async (client, kind) => {
    const owner = await client.createUser();
    const repo = await client.repoWithRelease(await client.createToken(owner));
    const caller = await client.caller(kind);
    return {
      rounds: 2,
      prepare: async (round) => ({
        read: () => status(client.read(caller, `${repo.path}/releases?limit=1`)),
        write: () =>
          client.admin(
            'PATCH',
            `/admin/users/${caller.user!.username}`,
            { restricted: round % 2 === 0 },
            200,
          ),
        after: round % 2 === 0 ? '404' : '200',
      }),
    };
  },
  'user made admin (and demoted)': async (client, kind) => {
    const hidden = await client.createUser({ visibility: 'private' });
    const caller = await client.caller(kind);
    return {
      rounds: 2,
      prepare: async (round) => ({
        read: () => status(client.read(caller, `/users/${hidden.username}`)),
        write: () =>
          client.admin('PATCH', `/admin/users/${caller.user!.username}`, { admin: round % 2 === 0 }, 200),
        after: round % 2 === 0 ? '200' : '404',
      }),
    };
  },
  'prohibit_login set (and cleared)': async (client, kind) => {
    const subject = await client.createUser();
    const caller = await client.caller(kind);
    return {
      rounds: 2,
      prepare: async (round) => ({
        read: () => status(client.read(caller, `/users/${subject.username}`)),
        write: () =>
          client.admin(
            'PATCH',
            `/admin/users/${caller.user!.username}`,
            { prohibit_login: round % 2 === 0 },
            200,
          ),
        after: round % 2 === 0 ? '403' : '200',
      }),
    };
  },
  'user deleted': async (client, kind) => {
    return {
      rounds: 1,
      prepare: async () => {
        const caller = await client.caller(kind);
        // Anonymous callers read the deleted user; everyone else is the deleted user.
        const subject = caller.user ?? (await client.createUser());
        return {
          read: () => status(client.read(caller, `/users/${subject.username}`)),
          write: () => client.admin('DELETE', `/admin/users/${subject.username}?purge=true`, undefined, 204),
          after: caller.user ? GONE : '404',
        };
      },
    };
  },
};

/** Registers the matrix's tests; `target()` is read when they run (after beforeAll). */
export function defineFreshnessMatrix(label: string, target: () => FreshnessTarget): void {
  describe(`reads sent after a write's answer reflect it: ${label}`, () => {
    for (const kind of CREDENTIALS) {
      for (const [change, setUp] of Object.entries(CHANGES)) {
        if (kind === 'anonymous' && SIGNED_IN_ONLY.has(change)) continue;
        it(`${kind}: ${change}`, async () => {
          const client = new Client(target());
          const plan = await setUp(client, kind);
          const result = await checkFreshReads(plan.rounds, plan.prepare, { readers: 3, judgedPerRound: 4 });
          expect(result.stale).toEqual([]);
          expect(result.judged).toBeGreaterThan(0);
        });
      }
    }
  });
}
