import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestForge, type TestForge, type TestUser, uniqueName } from './harness.js';

describe('authentication and token scopes', () => {
  let forge: TestForge;
  let alice: TestUser;
  let aliceToken: string;
  const swagger = () => `${forge.appUrl}api/swagger`;

  beforeAll(async () => {
    forge = await startTestForge();
    alice = await forge.createUser();
    aliceToken = await forge.createToken(alice, ['read:user']);
  });
  afterAll(() => forge.close());

  describe('token sources', () => {
    it('accepts Authorization: token and bearer (any case)', async () => {
      for (const scheme of ['token', 'bearer', 'Bearer']) {
        const res = await forge.request('GET', '/user', {
          headers: { authorization: `${scheme} ${aliceToken}` },
        });
        expect(res.status, scheme).toBe(200);
        expect(res.body.login).toBe(alice.username);
      }
    });

    it('accepts ?token= and ?access_token= with the deprecation warning header', async () => {
      for (const param of ['token', 'access_token']) {
        const res = await forge.request('GET', `/user?${param}=${aliceToken}`);
        expect(res.status).toBe(200);
        expect(res.body.login).toBe(alice.username);
        expect(res.headers.get('x-gitea-warning')).toMatch(
          /^token and access_token API authentication is deprecated/,
        );
      }
    });

    it('accepts HTTP Basic with the token as password or as user name', async () => {
      for (const basic of [
        { username: alice.username, password: aliceToken },
        { username: aliceToken, password: '' },
        { username: aliceToken, password: 'x-oauth-basic' },
      ]) {
        const res = await forge.request('GET', '/user', { basic });
        expect(res.status).toBe(200);
        expect(res.body.login).toBe(alice.username);
      }
    });

    it('Basic with a password has full access (no scope applies)', async () => {
      const res = await forge.request('GET', '/orgs', { basic: alice });
      expect(res.status).toBe(200);
    });

    it('an unknown or malformed token is 401 on every route, public ones included', async () => {
      // The last variant differs from the real token in its final character (whatever that was).
      const altered = `${aliceToken.slice(0, 39)}${aliceToken.endsWith('0') ? '1' : '0'}`;
      for (const token of ['0'.repeat(40), 'not-a-token', altered]) {
        for (const path of ['/users/search', '/version', `/users/${alice.username}`]) {
          const res = await forge.request('GET', path, { token });
          expect(res.status, `${path} ${token}`).toBe(401);
          expect(res.body).toEqual({ message: 'user does not exist [uid: 0, name: ]', url: swagger() });
        }
      }
      const query = await forge.request('GET', '/users/search?token=deadbeef');
      expect(query.status).toBe(401);
    });

    it('a wrong password is 401', async () => {
      const res = await forge.request('GET', '/user', {
        basic: { username: alice.username, password: 'wrong-password' },
      });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({
        message: `user does not exist [uid: 0, name: ${alice.username}]`,
        url: swagger(),
      });
    });

    it('session cookies and reverse-proxy headers do not authenticate', async () => {
      const res = await forge.request('GET', '/user', {
        headers: { cookie: 'i_like_gitea=abc', 'x-webauth-user': alice.username },
      });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ message: 'token is required', url: swagger() });
    });

    it('tokens are stored only as salted hashes', async () => {
      const rows = await forge.ctx.db.selectFrom('access_token').selectAll().execute();
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) {
        expect(JSON.stringify(row)).not.toContain(aliceToken);
        expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
        expect(row.token_salt).not.toBe('');
      }
      const aliceRow = rows.find((r) => r.token_last_eight === aliceToken.slice(-8));
      expect(aliceRow?.uid).toBe(alice.id);
    });
  });

  describe('query tokens can be switched off', () => {
    let strict: TestForge;
    beforeAll(async () => {
      strict = await startTestForge({ config: { security: { disable_query_auth_token: true } } });
    });
    afterAll(() => strict.close());

    it('ignores ?token= when disable_query_auth_token is set', async () => {
      const res = await strict.request('GET', `/user?token=${strict.admin.token}`);
      expect(res.status).toBe(401);
      expect(res.body.message).toBe('token is required');
      const header = await strict.request('GET', '/user', { token: strict.admin.token });
      expect(header.status).toBe(200);
    });
  });

  describe('scopes', () => {
    it("a token without the category gets 403 with Gitea's message, before the target is looked up", async () => {
      const token = await forge.createToken(alice, ['write:repository']);
      const res = await forge.request('GET', '/users/no-such-user-at-all', { token });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({
        message:
          'token does not have at least one of required scope(s), required=[read:user], token scope=write:repository',
        url: swagger(),
      });
    });

    it('write implies read; a read token may not write', async () => {
      const writer = await forge.createToken(alice, ['write:user']);
      expect((await forge.request('GET', '/user', { token: writer })).status).toBe(200);
      const res = await forge.request('POST', '/user/keys', {
        token: aliceToken,
        body: { title: 'k', key: 'x' },
      });
      expect(res.status).toBe(403);
      expect(res.body.message).toBe(
        'token does not have at least one of required scope(s), required=[write:user], token scope=read:user',
      );
    });

    it('admin routes need the admin category and a site administrator', async () => {
      const adminRead = await forge.createToken(forge.admin, ['read:admin']);
      expect((await forge.request('GET', '/admin/users', { token: adminRead })).status).toBe(200);
      const post = await forge.request('POST', '/admin/users', {
        token: adminRead,
        body: { username: uniqueName(), email: 'x@example.com', password: 'password1' },
      });
      expect(post.status).toBe(403);
      expect(post.body.message).toBe(
        'token does not have at least one of required scope(s), required=[write:admin], token scope=read:admin',
      );
      const notAdmin = await forge.request('GET', '/admin/users', { basic: alice });
      expect(notAdmin.status).toBe(403);
      expect(notAdmin.body).toEqual({ message: 'user should be the site admin', url: swagger() });
    });

    it('token creation normalises scopes as Gitea does', async () => {
      const cases: Array<[string[], string[]]> = [
        [['read:user', 'write:user'], ['write:user']],
        [
          ['all', 'public-only'],
          ['public-only', 'all'],
        ],
        [
          [
            'write:activitypub',
            'write:admin',
            'write:misc',
            'write:notification',
            'write:organization',
            'write:package',
            'write:issue',
            'write:repository',
            'write:user',
          ],
          ['all'],
        ],
        [
          ['read:repository', 'read:issue', 'public-only'],
          ['public-only', 'read:issue', 'read:repository'],
        ],
      ];
      for (const [scopes, expected] of cases) {
        const res = await forge.request('POST', `/users/${alice.username}/tokens`, {
          basic: alice,
          body: { name: uniqueName('t'), scopes },
        });
        expect(res.status).toBe(201);
        expect(res.body.scopes).toEqual(expected);
        expect(res.body.sha1).toMatch(/^[0-9a-f]{40}$/);
        expect(res.body.token_last_eight).toBe(res.body.sha1.slice(-8));
        expect(Object.keys(res.body)).toEqual(['id', 'name', 'sha1', 'token_last_eight', 'scopes']);
      }
    });

    it('token creation rejects invalid, empty and duplicate scopes/names with 400', async () => {
      const create = (body: unknown) =>
        forge.request('POST', `/users/${alice.username}/tokens`, { basic: alice, body });
      const invalid = await create({ name: uniqueName('t'), scopes: ['read:everything'] });
      expect(invalid.status).toBe(400);
      expect(invalid.body).toEqual({
        message: 'invalid access token scope provided: invalid access token scope: read:everything',
        url: swagger(),
      });
      const spaced = await create({ name: uniqueName('t'), scopes: [' read:user'] });
      expect(spaced.status).toBe(400);
      const empty = await create({ name: uniqueName('t'), scopes: [] });
      expect(empty.status).toBe(400);
      expect(empty.body.message).toBe('access token must have a scope');
      const name = uniqueName('t');
      expect((await create({ name, scopes: ['read:user'] })).status).toBe(201);
      const duplicate = await create({ name, scopes: ['read:user'] });
      expect(duplicate.status).toBe(400);
      expect(duplicate.body.message).toBe('access token name has been used already');
      const missing = await create({ scopes: ['read:user'] });
      expect(missing.status).toBe(422);
      expect(missing.body).toEqual({ message: '[Name]: Required', url: swagger() });
    });

    it('token management requires Basic auth as the user or a site admin', async () => {
      const path = `/users/${alice.username}/tokens`;
      const withToken = await forge.request('GET', path, { token: aliceToken });
      expect(withToken.status).toBe(401);
      expect(withToken.body).toEqual({ message: 'auth required', url: swagger() });
      const bob = await forge.createUser();
      const other = await forge.request('GET', path, { basic: bob });
      expect(other.status).toBe(403);
      expect(other.body.message).toBe('doer should be the site admin or be same as the contextUser');
      const list = await forge.request<Array<{ sha1: string }>>('GET', path, { basic: alice });
      expect(list.status).toBe(200);
      expect(Number(list.headers.get('x-total-count'))).toBe(list.body.length);
      expect(list.body.every((t) => t.sha1 === '')).toBe(true);
    });

    it('lists when each token was created and last used; a use shows in the next list', async () => {
      const name = uniqueName('t');
      const token = await forge.createToken(alice, ['read:user'], name);
      // An hour ago, as if the token had been made then and not used since.
      const hourAgo = Math.floor(Date.now() / 1000) - 3600;
      await forge.ctx.db
        .updateTable('access_token')
        .set({ created_unix: hourAgo, updated_unix: hourAgo })
        .where('name', '=', name)
        .execute();
      const path = `/users/${alice.username}/tokens?limit=50`;
      type Listed = { name: string; created_at: string; last_used_at: string };
      const listed = async () =>
        (await forge.request<Listed[]>('GET', path, { basic: alice })).body.find((t) => t.name === name)!;
      const before = await listed();
      expect(before.created_at).toBe(new Date(hourAgo * 1000).toISOString().replace('.000Z', 'Z'));
      expect(before.last_used_at).toBe(before.created_at);
      const usedFrom = Math.floor(Date.now() / 1000);
      expect((await forge.request('GET', '/user', { token })).status).toBe(200);
      const after = await listed();
      expect(after.created_at).toBe(before.created_at);
      expect(Date.parse(after.last_used_at) / 1000).toBeGreaterThanOrEqual(usedFrom);
    });

    it('tokens can be deleted by id or name; unknown is 404', async () => {
      const name = uniqueName('t');
      const token = await forge.createToken(alice, ['read:user'], name);
      const res = await forge.request('DELETE', `/users/${alice.username}/tokens/${name}`, { basic: alice });
      expect(res.status).toBe(204);
      expect((await forge.request('GET', '/user', { token })).status).toBe(401);
      const again = await forge.request('DELETE', `/users/${alice.username}/tokens/${name}`, {
        basic: alice,
      });
      expect(again.status).toBe(404);
      expect(
        (await forge.request('DELETE', `/users/${alice.username}/tokens/999999`, { basic: alice })).status,
      ).toBe(404);
      const byIdToken = await forge.request<{ id: number }>('POST', `/users/${alice.username}/tokens`, {
        basic: alice,
        body: { name: uniqueName('t'), scopes: ['read:user'] },
      });
      const byId = await forge.request('DELETE', `/users/${alice.username}/tokens/${byIdToken.body.id}`, {
        basic: alice,
      });
      expect(byId.status).toBe(204);
    });
  });

  describe('account states', () => {
    it('inactive and prohibit-login users get the prohibited 403; must-change-password its own 403', async () => {
      const user = await forge.createUser();
      const token = await forge.createToken(user, ['read:user']);
      const patch = (body: unknown) =>
        forge.request('PATCH', `/admin/users/${user.username}`, { token: forge.admin.token, body });
      const prohibited = {
        message: 'This account is prohibited from signing in, please contact your site administrator.',
      };
      await patch({ active: false });
      for (const auth of [{ token }, { basic: user }]) {
        const res = await forge.request('GET', '/user', auth);
        expect(res.status).toBe(403);
        expect(res.body).toEqual(prohibited);
      }
      await patch({ active: true, prohibit_login: true });
      expect((await forge.request('GET', '/user', { token })).body).toEqual(prohibited);
      await patch({ prohibit_login: false, must_change_password: true });
      const must = await forge.request('GET', '/user', { token });
      expect(must.status).toBe(403);
      const name = user.username;
      expect(must.body).toEqual({
        message:
          `You must change your password. An administrator can set a new one with ` +
          `\`forge admin user change-password --username ${name} --password <new password> --must-change-password=false\`` +
          ` or PATCH ${forge.appUrl}api/v1/admin/users/${name} with {"password": "<new password>", "must_change_password": false}.`,
      });
      expect(must.body.message).not.toMatch(/[^:]\/\//);
      await patch({ must_change_password: false });
      expect((await forge.request('GET', '/user', { token })).status).toBe(200);
    });

    it('POST /admin/users defaults must_change_password to true', async () => {
      const username = uniqueName();
      const created = await forge.request('POST', '/admin/users', {
        token: forge.admin.token,
        body: { username, email: `${username}@example.com`, password: 'password123' },
      });
      expect(created.status).toBe(201);
      const res = await forge.request('GET', '/user', { basic: { username, password: 'password123' } });
      expect(res.status).toBe(403);
      expect(res.body.message).toMatch(/^You must change your password/);
    });
  });

  describe('sudo', () => {
    it('site admins act as another user with the Sudo header or ?sudo=', async () => {
      const header = await forge.request('GET', '/user', {
        token: forge.admin.token,
        headers: { sudo: alice.username },
      });
      expect(header.status).toBe(200);
      expect(header.body.login).toBe(alice.username);
      const query = await forge.request('GET', `/user?sudo=${alice.username}`, { token: forge.admin.token });
      expect(query.body.login).toBe(alice.username);
    });

    it('non-admins may not sudo; unknown users are 404', async () => {
      const res = await forge.request('GET', '/user', {
        token: aliceToken,
        headers: { sudo: forge.admin.username },
      });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ message: 'Only administrators allowed to sudo.' });
      const unknown = await forge.request('GET', '/user', {
        token: forge.admin.token,
        headers: { sudo: 'nobody-here' },
      });
      expect(unknown.status).toBe(404);
    });
  });
});
