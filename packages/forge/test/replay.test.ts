// Kept answers replayed in front of Fastify (src/api/replay.ts), over a real HTTP server with requests
// whose every header is chosen here (fetch adds headers the replay does not take). Each test warms the
// replay with two identical requests, checks (SQLite) that the third was replayed, changes what the
// answer depends on — over HTTP, or on a second database connection as `forge admin` would — and asks
// again: the answer must be exactly that of the rows now. Both stores replay; on PostgreSQL the stamp
// moves with every commit on the server, including other test files' databases, so a request may find
// its answer's epoch gone and go to Fastify: warming then asks again, until one is replayed.
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type ForgeDatabase, openDatabase } from '../src/store/database.js';
import { startTestForge, type TestForge, type TestUser } from './harness.js';
import { createRepo } from './repo-fixtures.js';
import { testingPostgres } from './test-database.js';

let forge: TestForge;
let other: ForgeDatabase;
const agent = new http.Agent({ keepAlive: true });
// Requests after the first two until one is replayed: one on SQLite, a few more on a busy PostgreSQL.
const replayTries = testingPostgres() ? 30 : 1;

beforeAll(async () => {
  forge = await startTestForge();
  other = await openDatabase({ url: forge.ctx.config.databaseUrl, migrate: false });
}, 60_000);
afterAll(async () => {
  agent.destroy();
  await other?.close();
  await forge?.close();
});

interface Raw {
  status: number;
  /** Response header names and values as sent, in order. */
  headers: string[];
  body: string;
}

/** `GET /api/v1<path>` with exactly Host, Connection and `headers`. */
function get(path: string, headers: Record<string, string> = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${forge.url}/api/v1${path}`, { agent, headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.rawHeaders, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

const token = (t: string) => ({ authorization: `token ${t}` });
const replayed = () => forge.app.replay.replayed;

/** Two identical requests, then one that is replayed (see replayTries); returns the replayed answer. */
async function warm(path: string, headers: Record<string, string> = {}): Promise<Raw> {
  const first = await get(path, headers);
  expect(first.status).toBe(200);
  expect((await get(path, headers)).body).toBe(first.body);
  for (let i = 0; i < replayTries; i++) {
    const before = replayed();
    const next = await get(path, headers);
    expect(next.status).toBe(200);
    expect(next.body).toBe(first.body);
    if (replayed() === before + 1) return next;
    expect(replayed()).toBe(before);
  }
  throw new Error(`${path}: not replayed in ${replayTries} tries`);
}

/** The headers but Date, as name/value pairs. */
const withoutDate = (headers: string[]) => {
  const pairs: string[][] = [];
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i]!.toLowerCase() !== 'date') pairs.push([headers[i]!, headers[i + 1]!]);
  }
  return pairs;
};

const unknownToken = (appUrl: string) => ({
  message: 'user does not exist [uid: 0, name: ]',
  url: `${appUrl}api/swagger`,
});

describe(`kept answers replayed before Fastify (${testingPostgres() ? 'PostgreSQL' : 'SQLite'})`, () => {
  let owner: TestUser;
  let ownerToken: string;

  beforeAll(async () => {
    owner = await forge.createUser();
    ownerToken = await forge.createToken(owner, ['write:repository', 'write:user', 'write:organization']);
  });

  const newRepoWithRelease = async () => {
    const repo = await createRepo(forge, ownerToken);
    const created = await forge.request('POST', `${repo.path}/releases`, {
      token: ownerToken,
      body: { tag_name: 'v1', name: 'one' },
    });
    expect(created.status).toBe(201);
    return repo;
  };

  it('a replayed answer has the headers and body of the one Fastify builds (anonymous and token)', async () => {
    const repo = await newRepoWithRelease();
    const cases: [string, Record<string, string>][] = [
      [`${repo.path}/releases/latest`, {}],
      [`${repo.path}/releases?limit=1`, {}],
      [`/users/${owner.username}`, token(ownerToken)],
      [`${repo.path}/releases/latest`, token(ownerToken)],
    ];
    for (const [path, headers] of cases) {
      const replayedAnswer = await warm(path, headers);
      const before = replayed();
      // A header outside the replay's list sends the same request through Fastify.
      const built = await get(path, { ...headers, 'x-harmless': '1' });
      expect(replayed()).toBe(before);
      expect(built.status).toBe(200);
      expect(withoutDate(replayedAnswer.headers)).toEqual(withoutDate(built.headers));
      expect(replayedAnswer.body).toBe(built.body);
    }
  });

  it('pipelined requests are answered in order, replayed or not', async () => {
    const path = `/users/${owner.username}`;
    const expected = await warm(path, token(ownerToken));
    const version = await get('/version');
    const { port } = new URL(forge.url);
    const request = (p: string, auth: boolean) =>
      `GET /api/v1${p} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${auth ? `Authorization: token ${ownerToken}\r\n` : ''}\r\n`;
    const before = replayed();
    // A replayed request (on PostgreSQL waiting for the stamp) ahead of one Fastify answers at once.
    const received = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1');
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        text += chunk;
        if (text.split('HTTP/1.1 200 OK').length === 4) socket.end();
      });
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
      socket.write(request(path, true) + request('/version', false) + request(path, true));
    });
    const bodies = received
      .split('HTTP/1.1 200 OK')
      .slice(1)
      .map((answer) => answer.slice(answer.indexOf('\r\n\r\n') + 4));
    expect(bodies).toEqual([expected.body, version.body, expected.body]);
    expect(replayed()).toBeGreaterThan(before);
  });

  it('a token revoked over HTTP is refused on its next use', async () => {
    const user = await forge.createUser();
    const t = await forge.createToken(user, ['read:user'], 'revoked');
    await warm(`/users/${owner.username}`, token(t));
    const list = await forge.request<{ id: number; name: string }[]>(
      'GET',
      `/users/${user.username}/tokens`,
      {
        basic: user,
      },
    );
    const id = list.body.find((row) => row.name === 'revoked')!.id;
    const revoke = await forge.request('DELETE', `/users/${user.username}/tokens/${id}`, { basic: user });
    expect(revoke.status).toBe(204);
    const after = await get(`/users/${owner.username}`, token(t));
    expect(after.status).toBe(401);
    expect(JSON.parse(after.body)).toEqual(unknownToken(forge.appUrl));
  });

  it('a token deleted by another connection is refused on its next use', async () => {
    const user = await forge.createUser();
    const t = await forge.createToken(user, ['read:user'], 'deleted-elsewhere');
    await warm(`/users/${owner.username}`, token(t));
    await other.db.deleteFrom('access_token').where('token_last_eight', '=', t.slice(-8)).execute();
    const after = await get(`/users/${owner.username}`, token(t));
    expect(after.status).toBe(401);
    expect(JSON.parse(after.body)).toEqual(unknownToken(forge.appUrl));
  });

  it("a user deleted over HTTP: their token is refused and the user is 404 to others' tokens", async () => {
    const user = await forge.createUser();
    const t = await forge.createToken(user, ['read:user'], 'owner-deleted-over-http');
    await warm(`/users/${user.username}`, token(t));
    await warm(`/users/${user.username}`, token(ownerToken));
    const removed = await forge.request('DELETE', `/admin/users/${user.username}`, {
      token: forge.admin.token,
    });
    expect(removed.status).toBe(204);
    const own = await get(`/users/${user.username}`, token(t));
    expect(own.status).toBe(401);
    expect(JSON.parse(own.body)).toEqual(unknownToken(forge.appUrl));
    const seen = await get(`/users/${user.username}`, token(ownerToken));
    expect(seen.status).toBe(404);
    expect(JSON.parse(seen.body)).toEqual(
      (await forge.request('GET', `/users/${user.username}`, { token: ownerToken })).body,
    );
    expect(JSON.parse(seen.body)).toEqual({
      errors: [`user redirect does not exist [name: ${user.username}]`],
      message: 'GetUserByName',
      url: `${forge.appUrl}api/swagger`,
    });
  });

  it('a user deleted by another connection: their token is refused and the user is 404', async () => {
    const user = await forge.createUser();
    const t = await forge.createToken(user, ['read:user'], 'owner-deleted-elsewhere');
    await warm(`/users/${user.username}`, token(t));
    await warm(`/users/${user.username}`, token(ownerToken));
    await other.db.deleteFrom('access_token').where('uid', '=', user.id).execute();
    await other.db.deleteFrom('user').where('id', '=', user.id).execute();
    const own = await get(`/users/${user.username}`, token(t));
    expect(own.status).toBe(401);
    expect(JSON.parse(own.body)).toEqual(unknownToken(forge.appUrl));
    const seen = await get(`/users/${user.username}`, token(ownerToken));
    expect(seen.status).toBe(404);
    expect(JSON.parse(seen.body)).toEqual({
      errors: [`user redirect does not exist [name: ${user.username}]`],
      message: 'GetUserByName',
      url: `${forge.appUrl}api/swagger`,
    });
  });

  it("a token's scope changed by another connection applies on its next use", async () => {
    const user = await forge.createUser();
    const t = await forge.createToken(user, ['read:user'], 'narrowed');
    await warm(`/users/${owner.username}`, token(t));
    await other.db
      .updateTable('access_token')
      .set({ scope: 'read:repository' })
      .where('token_last_eight', '=', t.slice(-8))
      .execute();
    const after = await get(`/users/${owner.username}`, token(t));
    expect(after.status).toBe(403);
    expect(JSON.parse(after.body)).toEqual({
      message:
        'token does not have at least one of required scope(s), required=[read:user], token scope=read:repository',
      url: `${forge.appUrl}api/swagger`,
    });
  });

  it('a repository made private over HTTP is 404 to anonymous and to a token without access', async () => {
    const repo = await newRepoWithRelease();
    const stranger = await forge.createUser();
    const strangerToken = await forge.createToken(stranger, ['read:repository'], 'stranger');
    await warm(`${repo.path}/releases/latest`);
    await warm(`${repo.path}/releases/latest`, token(strangerToken));
    const hide = await forge.request('PATCH', repo.path, { token: ownerToken, body: { private: true } });
    expect(hide.status).toBe(200);
    for (const headers of [{}, token(strangerToken)]) {
      const after = await get(`${repo.path}/releases/latest`, headers);
      expect(after.status).toBe(404);
      expect(JSON.parse(after.body)).toEqual({
        errors: null,
        message: "The target couldn't be found.",
        url: `${forge.appUrl}api/swagger`,
      });
    }
  });

  it('a repository made private by another connection is 404 to an anonymous reader', async () => {
    const repo = await newRepoWithRelease();
    await warm(`${repo.path}/releases/latest`);
    await other.db
      .updateTable('repository')
      .set({ is_private: 1 })
      .where('lower_name', '=', repo.name.toLowerCase())
      .execute();
    const after = await get(`${repo.path}/releases/latest`);
    expect(after.status).toBe(404);
    expect(JSON.parse(after.body)).toEqual({
      errors: null,
      message: "The target couldn't be found.",
      url: `${forge.appUrl}api/swagger`,
    });
  });

  it("a token's once-a-minute touch is not skipped by the replay", async () => {
    const user = await forge.createUser();
    const t = await forge.createToken(user, ['read:user'], 'touched');
    const path = `/users/${owner.username}`;
    await warm(path, token(t));
    const updated = async () =>
      (
        await other.db
          .selectFrom('access_token')
          .select('updated_unix')
          .where('token_last_eight', '=', t.slice(-8))
          .executeTakeFirstOrThrow()
      ).updated_unix;
    const before = await updated();
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 61_000);
      const count = replayed();
      expect((await get(path, token(t))).status).toBe(200);
      expect(replayed()).toBe(count);
      expect(await updated()).toBeGreaterThanOrEqual(before + 61);
    } finally {
      vi.useRealTimers();
    }
  });

  it('Sudo, cookies, query tokens and Basic credentials are never answered by the replay', async () => {
    const user = await forge.createUser();
    const t = await forge.createToken(user, ['read:user'], 'not-admin');
    const path = `/users/${owner.username}`;
    await warm(path, token(t));
    const before = replayed();
    const sudo = await get(path, { ...token(t), sudo: owner.username });
    expect(sudo.status).toBe(403);
    expect(JSON.parse(sudo.body)).toEqual({ message: 'Only administrators allowed to sudo.' });
    expect((await get(path, { ...token(t), cookie: 'a=b' })).status).toBe(200);
    const basic = {
      authorization: `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}`,
    };
    for (let i = 0; i < 3; i++) expect((await get(path, basic)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await get(`${path}?token=${t}`)).status).toBe(200);
    expect(replayed()).toBe(before);
  });

  it('nothing is replayed once the server is closing', async () => {
    const own = await startTestForge();
    try {
      const repo = await createRepo(own, own.admin.token);
      await own.request('POST', `${repo.path}/releases`, {
        token: own.admin.token,
        body: { tag_name: 'v1' },
      });
      const url = `${own.url}/api/v1${repo.path}/releases/latest`;
      const once = () =>
        new Promise<number>((resolve, reject) => {
          http
            .get(url, { agent }, (response) => {
              response.resume();
              response.on('end', () => resolve(response.statusCode!));
            })
            .on('error', reject);
        });
      for (let i = 0; i < 2 + replayTries && own.app.replay.replayed === 0; i++)
        expect(await once()).toBe(200);
      expect(own.app.replay.replayed).toBeGreaterThan(0);
      // Set as close() is called, when Fastify starts answering 503.
      const closing = own.app.close();
      expect(own.app.replay.closing).toBe(true);
      await closing;
    } finally {
      await own.close().catch(() => {});
    }
  });
});
