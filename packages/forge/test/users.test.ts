import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertActions } from '../src/store/actions.js';
import { startTestForge, type TestForge, type TestUser, uniqueName } from './harness.js';
import { createRepo } from './repo-fixtures.js';

const USER_KEYS = [
  'id',
  'login',
  'login_name',
  'source_id',
  'full_name',
  'email',
  'avatar_url',
  'html_url',
  'language',
  'is_admin',
  'last_login',
  'created',
  'restricted',
  'active',
  'prohibit_login',
  'location',
  'website',
  'description',
  'visibility',
  'followers_count',
  'following_count',
  'starred_repos_count',
  'username',
];

interface SearchBody {
  ok: boolean;
  data: Array<{ id: number; login: string; email: string; visibility: string }>;
}

describe('users', () => {
  let forge: TestForge;
  let prefix: string;
  let pub: TestUser;
  let limited: TestUser;
  let hidden: TestUser;
  let secretMail: TestUser;
  let viewer: TestUser;
  let viewerToken: string;
  let restricted: TestUser;
  let restrictedToken: string;
  let adminRead: string;
  const noreply = () => `noreply.${new URL(forge.appUrl).hostname}`;

  const search = (query: string, auth: { token?: string } = {}) =>
    forge.request<SearchBody>('GET', `/users/search?${query}`, auth);

  beforeAll(async () => {
    forge = await startTestForge();
    prefix = uniqueName('zq');
    pub = await forge.createUser({ username: `${prefix}-pub`, fullName: 'Ada Lovelace' });
    limited = await forge.createUser({ username: `${prefix}-lim`, visibility: 'limited' });
    hidden = await forge.createUser({ username: `${prefix}-priv`, visibility: 'private' });
    secretMail = await forge.createUser({
      username: `${prefix}-mail`,
      email: `${prefix}-hushed@example.org`,
      keepEmailPrivate: true,
    });
    viewer = await forge.createUser();
    viewerToken = await forge.createToken(viewer, ['read:user']);
    restricted = await forge.createUser({ username: `${prefix}-restr`, restricted: true });
    restrictedToken = await forge.createToken(restricted, ['read:user']);
    adminRead = await forge.createToken(forge.admin, ['read:user']);
  });
  afterAll(() => forge.close());

  describe('Users rule 1: reserved ids return exactly the placeholder users', () => {
    it('uid=-1 returns exactly the Ghost user', async () => {
      const res = await search('uid=-1');
      expect(res.status).toBe(200);
      expect(res.body.ok).toBe(true);
      expect(res.body.data).toHaveLength(1);
      expect(res.body.data[0]).toEqual({
        id: -1,
        login: 'Ghost',
        login_name: '',
        source_id: 0,
        full_name: '',
        email: `ghost@${noreply()}`,
        avatar_url: `${forge.appUrl}assets/img/avatar_default.png`,
        html_url: `${forge.appUrl}Ghost`,
        language: '',
        is_admin: false,
        last_login: '0001-01-01T00:00:00Z',
        created: '1970-01-01T00:00:00Z',
        restricted: false,
        active: false,
        prohibit_login: false,
        location: '',
        website: '',
        description: '',
        visibility: 'public',
        followers_count: 0,
        following_count: 0,
        starred_repos_count: 0,
        username: 'Ghost',
      });
      expect(res.headers.get('x-total-count')).toBe('1');
    });

    it('uid=-2 returns exactly the actions user, whatever q says', async () => {
      const res = await search('uid=-2&q=nothing-matches-this');
      expect(res.body.data.map((u) => [u.id, u.login])).toEqual([[-2, 'gitea-actions']]);
      expect(res.body.data[0]!.email).toBe(`gitea-actions@${noreply()}`);
      const asAdmin = await search('uid=-2', { token: adminRead });
      expect(asAdmin.body.data[0]).toMatchObject({
        email: 'teabot@gitea.io',
        active: true,
        login_name: 'gitea-actions',
        full_name: 'Gitea Actions',
      });
    });

    it('uid=-1 for a signed-in viewer shows Ghost with an empty e-mail', async () => {
      const res = await search('uid=-1', { token: viewerToken });
      expect(res.body.data[0]!.email).toBe('');
    });
  });

  describe('Users rule 2: search matches individuals by q, also by e-mail, within what the caller may see', () => {
    it('matches login, full name and e-mail, case-insensitively, and never returns organizations', async () => {
      await forge.createOrg(forge.admin.token, { username: `${prefix}-org` });
      const byLogin = await search(`q=${prefix.toUpperCase()}-PUB`);
      expect(byLogin.body.data.map((u) => u.login)).toEqual([pub.username]);
      const byName = await search('q=ada%20LOVE');
      expect(byName.body.data.map((u) => u.login)).toEqual([pub.username]);
      const byMail = await search(`q=${pub.username}@EXAMPLE.com`);
      expect(byMail.body.data.map((u) => u.login)).toEqual([pub.username]);
      const all = await search(`q=${prefix}`, { token: adminRead });
      expect(all.body.data.map((u) => u.login)).not.toContain(`${prefix}-org`);
    });

    it('results are ordered by name', async () => {
      const res = await search(`q=${prefix}`, { token: adminRead });
      const logins = res.body.data.map((u) => u.login);
      expect(logins).toEqual([...logins].sort());
      expect(logins).toEqual([
        limited.username,
        secretMail.username,
        hidden.username,
        pub.username,
        restricted.username,
      ]);
    });

    it('anonymous callers see only public users, with placeholder e-mails', async () => {
      const res = await search(`q=${prefix}`);
      expect(res.status).toBe(200);
      expect(res.body.data.map((u) => u.login).sort()).toEqual(
        [secretMail.username, pub.username, restricted.username].sort(),
      );
      for (const user of res.body.data) expect(user.email).toBe(`${user.login.toLowerCase()}@${noreply()}`);
    });

    it('signed-in users also see limited users and themselves, and real e-mails unless kept private', async () => {
      const res = await search(`q=${prefix}`, { token: viewerToken });
      const logins = res.body.data.map((u) => u.login);
      expect(logins.sort()).toEqual(
        [limited.username, secretMail.username, pub.username, restricted.username].sort(),
      );
      const byLogin = Object.fromEntries(res.body.data.map((u) => [u.login, u.email]));
      expect(byLogin[pub.username]).toBe(pub.email);
      expect(byLogin[secretMail.username]).toBe(`${secretMail.username.toLowerCase()}@${noreply()}`);
      const self = await search(`q=${hidden.username}`, {
        token: await forge.createToken(hidden, ['read:user']),
      });
      expect(self.body.data.map((u) => u.login)).toEqual([hidden.username]);
    });

    it('site admins see every user, private ones included, with real e-mails', async () => {
      const res = await search(`q=${hidden.username}`, { token: adminRead });
      expect(res.body.data).toHaveLength(1);
      expect(res.body.data[0]).toMatchObject({ visibility: 'private', email: hidden.email });
    });

    it('restricted users see only themselves (and organizations they belong to)', async () => {
      const res = await search(`q=${prefix}`, { token: restrictedToken });
      expect(res.body.data.map((u) => u.login)).toEqual([restricted.username]);
    });

    it('a private e-mail matches only for its owner and site admins', async () => {
      const q = `q=${prefix}-hushed@example.org`;
      expect((await search(q)).body.data).toEqual([]);
      expect((await search(q, { token: viewerToken })).body.data).toEqual([]);
      const self = await search(q, { token: await forge.createToken(secretMail, ['read:user']) });
      expect(self.body.data.map((u) => u.email)).toEqual([secretMail.email]);
      const admin = await search(q, { token: adminRead });
      expect(admin.body.data.map((u) => u.email)).toEqual([secretMail.email]);
    });

    it('filters by uid when given', async () => {
      const res = await search(`uid=${pub.id}`, { token: viewerToken });
      expect(res.body.data.map((u) => u.id)).toEqual([pub.id]);
      const hiddenById = await search(`uid=${hidden.id}`, { token: viewerToken });
      expect(hiddenById.body.data).toEqual([]);
    });

    it('a public-only token returns public users only', async () => {
      const token = await forge.createToken(forge.admin, ['read:user', 'public-only']);
      const res = await search(`q=${prefix}`, { token });
      expect(res.body.data.length).toBeGreaterThan(0);
      expect(res.body.data.every((u) => u.visibility === 'public')).toBe(true);
    });

    it('LIKE wildcards in q match literally', async () => {
      expect((await search('q=%25', { token: adminRead })).body.data).toEqual([]);
      expect((await search(`q=${prefix}_pub`, { token: adminRead })).body.data).toEqual([]);
    });
  });

  describe('Users rule 3: search sets Link and X-Total-Count from the total', () => {
    it('page 1 of 3 links next and last; the total counts every match', async () => {
      const res = await search(`q=${prefix}&limit=2`, { token: adminRead });
      expect(res.body.data).toHaveLength(2);
      expect(res.headers.get('x-total-count')).toBe('5');
      const base = `${forge.appUrl}api/v1/users/search`;
      expect(res.headers.get('link')).toBe(
        `<${base}?limit=2&page=2&q=${prefix}>; rel="next",<${base}?limit=2&page=3&q=${prefix}>; rel="last"`,
      );
      expect(res.headers.get('access-control-expose-headers')).toBe('Link, X-Total-Count');
    });

    it('a middle page links next, last, first and prev; the last page first and prev', async () => {
      const base = `${forge.appUrl}api/v1/users/search`;
      const middle = await search(`q=${prefix}&limit=2&page=2`, { token: adminRead });
      expect(middle.headers.get('link')).toBe(
        [
          `<${base}?limit=2&page=3&q=${prefix}>; rel="next"`,
          `<${base}?limit=2&page=3&q=${prefix}>; rel="last"`,
          `<${base}?limit=2&page=1&q=${prefix}>; rel="first"`,
          `<${base}?limit=2&page=1&q=${prefix}>; rel="prev"`,
        ].join(','),
      );
      const last = await search(`q=${prefix}&limit=2&page=3`, { token: adminRead });
      expect(last.body.data).toHaveLength(1);
      expect(last.headers.get('link')).toBe(
        `<${base}?limit=2&page=1&q=${prefix}>; rel="first",<${base}?limit=2&page=2&q=${prefix}>; rel="prev"`,
      );
    });

    it('a single page has no Link header but still the total', async () => {
      const res = await search(`q=${prefix}`, { token: adminRead });
      expect(res.headers.get('link')).toBeNull();
      expect(res.headers.get('x-total-count')).toBe('5');
      expect(res.headers.get('access-control-expose-headers')).toBe('X-Total-Count');
    });

    // 52 users through the admin API, each hashing its password: the time allowed fits a busy machine.
    it('limit defaults to 30 and is capped at 50; a page past the end is empty', async () => {
      const many = uniqueName('bulk');
      for (let i = 0; i < 52; i += 1)
        await forge.createUser({ username: `${many}-${String(i).padStart(2, '0')}` });
      expect((await search(`q=${many}`)).body.data).toHaveLength(30);
      expect((await search(`q=${many}&limit=500`)).body.data).toHaveLength(50);
      expect((await search(`q=${many}&limit=0`)).body.data).toHaveLength(30);
      const past = await search(`q=${many}&page=9`);
      expect(past.body.data).toEqual([]);
      expect(past.headers.get('x-total-count')).toBe('52');
    }, 120_000);
  });

  describe('Users rule 4: GET /users/{username} answers 404 for absent and invisible users alike', () => {
    it('absent and private users give the same 404 body to the same viewer', async () => {
      const absent = await forge.request('GET', `/users/${prefix}-nobody`, { token: viewerToken });
      const invisible = await forge.request('GET', `/users/${prefix}-priv`, { token: viewerToken });
      expect(absent.status).toBe(404);
      expect(invisible.status).toBe(404);
      expect(absent.body).toEqual({
        errors: [`user redirect does not exist [name: ${prefix}-nobody]`],
        message: 'GetUserByName',
        url: `${forge.appUrl}api/swagger`,
      });
      expect(invisible.body).toEqual({
        ...absent.body,
        errors: [`user redirect does not exist [name: ${prefix}-priv]`],
      });
    });

    it('limited users are 404 for anonymous callers and visible to signed-in ones', async () => {
      expect((await forge.request('GET', `/users/${limited.username}`)).status).toBe(404);
      expect((await forge.request('GET', `/users/${limited.username}`, { token: viewerToken })).status).toBe(
        200,
      );
      expect(
        (await forge.request('GET', `/users/${limited.username}`, { token: restrictedToken })).status,
      ).toBe(404);
    });

    it('private users are visible to themselves and site admins', async () => {
      const self = await forge.request('GET', `/users/${hidden.username}`, { basic: hidden });
      expect(self.status).toBe(200);
      const admin = await forge.request('GET', `/users/${hidden.username.toUpperCase()}`, {
        token: adminRead,
      });
      expect(admin.status).toBe(200);
      expect(admin.body.login).toBe(hidden.username);
    });

    it('the user in the path, read with the token, follows changes and a wrong token on the next request', async () => {
      const target = await forge.createUser({ username: `${prefix}-flip` });
      const read = (token = viewerToken) =>
        forge.request('GET', `/users/${target.username.toUpperCase()}`, { token });
      const edit = (body: Record<string, unknown>) =>
        forge.request('PATCH', `/admin/users/${target.username}`, { token: forge.admin.token, body });
      expect((await read()).body).toMatchObject({ id: target.id, full_name: '' });
      expect((await edit({ visibility: 'private', full_name: 'Flipped' })).status).toBe(200);
      expect((await read()).status).toBe(404);
      expect((await edit({ visibility: 'public' })).status).toBe(200);
      expect((await read()).body).toMatchObject({ id: target.id, full_name: 'Flipped' });
      const wrong = await read(`${viewerToken.slice(0, -1)}${viewerToken.endsWith('0') ? '1' : '0'}`);
      expect(wrong.status).toBe(401);
    });

    it('the Ghost and actions users cannot be fetched by name', async () => {
      expect((await forge.request('GET', '/users/ghost')).status).toBe(404);
      expect((await forge.request('GET', '/users/gitea-actions')).status).toBe(404);
    });

    it('rule 4: a public-only token gets the absent-user 404 for a non-public user (existence not revealed)', async () => {
      const token = await forge.createToken(forge.admin, ['read:user', 'read:organization', 'public-only']);
      for (const target of [limited, hidden]) {
        const absentName = `${target.username}x`;
        const absent = await forge.request('GET', `/users/${absentName}`, { token });
        for (const path of ['', '/heatmap', '/activities/feeds', '/orgs']) {
          const res = await forge.request('GET', `/users/${target.username}${path}`, { token });
          expect(res.status).toBe(404);
          expect(res.text).toBe(
            absent.text.replaceAll(absentName.toLowerCase(), target.username.toLowerCase()),
          );
        }
      }
      // A public user is still there for the same token.
      const seen = await forge.request('GET', `/users/${viewer.username}`, { token });
      expect(seen.status).toBe(200);
    });

    it('organizations resolve too; anonymous callers get the placeholder e-mail', async () => {
      const org = await forge.createOrg(forge.admin.token, { email: 'org@example.com' });
      const anon = await forge.request('GET', `/users/${org.name}`);
      expect(anon.status).toBe(200);
      expect(anon.body.email).toBe(`${org.name.toLowerCase()}@${noreply()}`);
      const signed = await forge.request('GET', `/users/${org.name}`, { token: viewerToken });
      expect(signed.body.email).toBe('org@example.com');
    });
  });

  describe('User wire shape', () => {
    it('has every field in Gitea order with the duplicate username; private fields only for self/admin', async () => {
      const other = await forge.request('GET', `/users/${pub.username}`, { token: viewerToken });
      expect(Object.keys(other.body)).toEqual(USER_KEYS);
      expect(other.body).toMatchObject({
        id: pub.id,
        login: pub.username,
        username: pub.username,
        full_name: 'Ada Lovelace',
        email: pub.email,
        html_url: `${forge.appUrl}${pub.username}`,
        is_admin: false,
        active: false,
        login_name: '',
        last_login: '0001-01-01T00:00:00Z',
        visibility: 'public',
      });
      expect(other.body.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      const self = await forge.request('GET', '/user', { basic: pub });
      expect(Object.keys(self.body)).toEqual(USER_KEYS);
      expect(self.body).toMatchObject({ login: pub.username, active: true, email: pub.email });
      const admin = await forge.request('GET', '/user', { token: adminRead });
      expect(admin.body).toMatchObject({ login: forge.admin.username, is_admin: true, active: true });
      const anon = await forge.request('GET', `/users/${pub.username}`);
      expect(anon.body.email).toBe(`${pub.username.toLowerCase()}@${noreply()}`);
    });

    it('GET /user needs a signed-in caller', async () => {
      const res = await forge.request('GET', '/user');
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ message: 'token is required', url: `${forge.appUrl}api/swagger` });
    });
  });

  describe('heatmap', () => {
    it("counts the user's own actions of the last 365 days in 15-minute UTC buckets", async () => {
      const user = await forge.createUser();
      const other = await forge.createUser();
      const now = Math.floor(Date.now() / 1000);
      const day = 86400;
      const base = Math.floor((now - 30 * day) / 900) * 900;
      const row = (
        created: number,
        fields: Partial<{ act_user_id: number; user_id: number; is_private: 0 | 1 }> = {},
      ) => ({
        user_id: user.id,
        act_user_id: user.id,
        op_type: 5,
        created_unix: created,
        ...fields,
      });
      await insertActions(forge.ctx.db, [
        row(base + 10),
        row(base + 899),
        row(base + 900),
        row(base + 5 * day, { is_private: 1 }),
        row(now - 366 * day),
        row(base + 20, { act_user_id: other.id }),
        row(base + 30, { user_id: other.id }),
      ]);
      const res = await forge.request('GET', `/users/${user.username}/heatmap`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([
        { timestamp: base, contributions: 2 },
        { timestamp: base + 900, contributions: 1 },
        { timestamp: base + 5 * day, contributions: 1 },
      ]);
    });

    it('is an empty list without activity and 404 for hidden users', async () => {
      const user = await forge.createUser();
      expect((await forge.request('GET', `/users/${user.username}/heatmap`)).body).toEqual([]);
      expect((await forge.request('GET', `/users/${hidden.username}/heatmap`)).status).toBe(404);
    });
  });

  describe('Users rule 5: activity feeds', () => {
    let actor: TestUser;
    let friend: TestUser;
    beforeAll(async () => {
      actor = await forge.createUser();
      friend = await forge.createUser();
      const at = (iso: string) => Date.parse(iso) / 1000;
      await insertActions(forge.ctx.db, [
        {
          user_id: actor.id,
          act_user_id: actor.id,
          op_type: 1,
          created_unix: at('2026-03-01T10:00:00Z'),
          content: 'public own',
        },
        {
          user_id: actor.id,
          act_user_id: actor.id,
          op_type: 5,
          is_private: 1,
          created_unix: at('2026-03-02T10:00:00Z'),
          content: 'private own',
        },
        {
          user_id: actor.id,
          act_user_id: friend.id,
          op_type: 24,
          created_unix: at('2026-03-03T23:59:59Z'),
          ref_name: 'v1',
          content: 'friend release',
        },
        {
          user_id: actor.id,
          act_user_id: actor.id,
          op_type: 9,
          is_deleted: 1,
          created_unix: at('2026-03-04T10:00:00Z'),
        },
        { user_id: friend.id, act_user_id: friend.id, op_type: 1, created_unix: at('2026-03-05T10:00:00Z') },
      ]);
    });
    const feed = (query: string, auth: { token?: string; basic?: TestUser } = {}) =>
      forge.request<Array<{ content: string; op_type: string; act_user: { login: string } }>>(
        'GET',
        `/users/${actor.username}/activities/feeds${query}`,
        auth,
      );

    it('private activity is included only for the user themself and site admins', async () => {
      const anon = await feed('');
      expect(anon.status).toBe(200);
      expect(anon.body.map((a) => a.content)).toEqual(['friend release', 'public own']);
      expect(anon.headers.get('x-total-count')).toBe('2');
      const other = await feed('', { token: viewerToken });
      expect(other.body.map((a) => a.content)).toEqual(['friend release', 'public own']);
      const self = await feed('', { basic: actor });
      expect(self.body.map((a) => a.content)).toEqual(['friend release', 'private own', 'public own']);
      expect(self.headers.get('x-total-count')).toBe('3');
      const admin = await feed('', { token: adminRead });
      expect(admin.body.map((a) => a.content)).toEqual(['friend release', 'private own', 'public own']);
    });

    it('only-performed-by=true keeps the actions the user performed', async () => {
      const res = await feed('?only-performed-by=true', { basic: actor });
      expect(res.body.map((a) => a.content)).toEqual(['private own', 'public own']);
      expect(res.headers.get('x-total-count')).toBe('2');
    });

    it('date keeps one UTC day; an unparsable date does not filter', async () => {
      const res = await feed('?date=2026-03-03', { basic: actor });
      expect(res.body.map((a) => a.content)).toEqual(['friend release']);
      expect(res.headers.get('x-total-count')).toBe('1');
      // A page past the end has no row to carry the total: it is still the day's.
      const past = await feed('?date=2026-03-03&page=2', { basic: actor });
      expect(past.body).toEqual([]);
      expect(past.headers.get('x-total-count')).toBe('1');
      const bad = await feed('?date=yesterday', { basic: actor });
      expect(bad.body).toHaveLength(3);
    });

    it("paginates with X-Total-Count and Link; entries have Gitea's Activity shape", async () => {
      const res = await feed('?limit=1&page=2', { basic: actor });
      expect(res.body.map((a) => a.content)).toEqual(['private own']);
      expect(res.headers.get('x-total-count')).toBe('3');
      const base = `${forge.appUrl}api/v1/users/${actor.username}/activities/feeds`;
      expect(res.headers.get('link')).toBe(
        `<${base}?limit=1&page=3>; rel="next",<${base}?limit=1&page=3>; rel="last",` +
          `<${base}?limit=1&page=1>; rel="first",<${base}?limit=1&page=1>; rel="prev"`,
      );
      expect(res.headers.get('access-control-expose-headers')).toBe('Link, X-Total-Count');
      const past = await feed('?limit=1&page=9', { basic: actor });
      expect(past.body).toEqual([]);
      expect(past.headers.get('x-total-count')).toBe('3');
      expect((await feed('', { basic: actor })).headers.get('link')).toBeNull();
      const first = (await feed('?limit=1', { basic: actor })).body[0] as unknown as Record<string, unknown>;
      expect(Object.keys(first)).toEqual([
        'id',
        'user_id',
        'op_type',
        'act_user_id',
        'act_user',
        'repo_id',
        'repo',
        'comment_id',
        'comment',
        'ref_name',
        'is_private',
        'content',
        'created',
      ]);
      expect(first).toMatchObject({
        user_id: actor.id,
        op_type: 'publish_release',
        act_user_id: friend.id,
        act_user: { login: friend.username },
        ref_name: 'v1',
        is_private: false,
        created: '2026-03-03T23:59:59Z',
      });
    });

    it('a row whose actor and repository are gone shows Ghost and no repository', async () => {
      const owner = await forge.createUser();
      await insertActions(forge.ctx.db, [
        { user_id: owner.id, act_user_id: 99_999_999, repo_id: 99_999_998, op_type: 5, created_unix: 1 },
      ]);
      const res = await forge.request<Array<Record<string, unknown>>>(
        'GET',
        `/users/${owner.username}/activities/feeds`,
        { basic: owner },
      );
      expect(res.status).toBe(200);
      expect(res.headers.get('x-total-count')).toBe('1');
      expect(res.body).toHaveLength(1);
      expect(res.body[0]).toMatchObject({
        act_user_id: 99_999_999,
        act_user: { login: 'Ghost' },
        repo: null,
      });
    });

    it('404 for absent and hidden users', async () => {
      expect((await forge.request('GET', `/users/${prefix}-nobody/activities/feeds`)).status).toBe(404);
      expect(
        (await forge.request('GET', `/users/${hidden.username}/activities/feeds`, { token: viewerToken }))
          .status,
      ).toBe(404);
    });
  });

  describe('restricted viewers: heatmap and feeds follow repository reads and profile visibility', () => {
    it('a restricted user sees no activity in public repositories it was not given; a collaborator does', async () => {
      const author = await forge.createUser();
      const authorToken = await forge.createToken(author, ['write:repository', 'write:user']);
      const repo = await createRepo(forge, authorToken);
      const made = await forge.request('POST', `${repo.path}/releases`, {
        token: authorToken,
        body: { tag_name: 'v1', name: 'one' },
      });
      expect(made.status).toBe(201);
      const heatmap = (token?: string) =>
        forge.request('GET', `/users/${author.username}/heatmap`, { token });
      const feed = (token?: string) =>
        forge.request('GET', `/users/${author.username}/activities/feeds`, { token });
      // Everyone else reads the public repository, so its activity shows.
      expect((await heatmap(viewerToken)).body).not.toEqual([]);
      const seen = await feed(viewerToken);
      expect(seen.body.length).toBeGreaterThan(0);
      expect(seen.headers.get('x-total-count')).toBe(String(seen.body.length));
      // A restricted user reads only what it is given: the public repository is not among it.
      const hiddenMap = await heatmap(restrictedToken);
      expect(hiddenMap.status).toBe(200);
      expect(hiddenMap.body).toEqual([]);
      const hiddenFeed = await feed(restrictedToken);
      expect(hiddenFeed.status).toBe(200);
      expect(hiddenFeed.body).toEqual([]);
      expect(hiddenFeed.headers.get('x-total-count')).toBe('0');
      // Given the repository (as collaborator), the same entries appear.
      const grant = await forge.request('PUT', `${repo.path}/collaborators/${restricted.username}`, {
        token: authorToken,
        body: { permission: 'read' },
      });
      expect(grant.status).toBe(204);
      expect((await heatmap(restrictedToken)).body).toEqual((await heatmap(viewerToken)).body);
      expect((await feed(restrictedToken)).body.map((a: { id: number }) => a.id)).toEqual(
        seen.body.map((a: { id: number }) => a.id),
      );
    });

    it("a limited user's heatmap and feeds are 404 for a restricted viewer (go-gitea/gitea#39004)", async () => {
      const lim = await forge.createUser({ visibility: 'limited' });
      const limToken = await forge.createToken(lim, ['write:repository', 'write:user']);
      await createRepo(forge, limToken);
      for (const path of ['heatmap', 'activities/feeds']) {
        expect(
          (await forge.request('GET', `/users/${lim.username}/${path}`, { token: viewerToken })).status,
        ).toBe(200);
        const res = await forge.request('GET', `/users/${lim.username}/${path}`, { token: restrictedToken });
        expect(res.status).toBe(404);
      }
    });
  });

  describe('organizations of a user (two token categories)', () => {
    it('needs both read:user and read:organization', async () => {
      const onlyUser = await forge.createToken(viewer, ['read:user']);
      const res = await forge.request('GET', '/user/orgs', { token: onlyUser });
      expect(res.status).toBe(403);
      expect(res.body.message).toBe(
        'token does not have at least one of required scope(s), required=[read:user read:organization], token scope=read:user',
      );
      const both = await forge.createToken(viewer, ['read:user', 'read:organization']);
      expect((await forge.request('GET', '/user/orgs', { token: both })).status).toBe(200);
    });

    it("lists the caller's organizations; hidden memberships only for self and admins", async () => {
      const owner = await forge.createUser();
      const ownerToken = await forge.createToken(owner, ['write:organization', 'read:user']);
      const org = await forge.createOrg(ownerToken, {});
      const mine = await forge.request('GET', '/user/orgs', { token: ownerToken });
      expect(mine.body.map((o: { name: string }) => o.name)).toEqual([org.name]);
      expect(mine.headers.get('x-total-count')).toBe('1');
      const theirs = await forge.request('GET', `/users/${owner.username}/orgs`, { token: viewerToken });
      expect(theirs.status).toBe(403);
      const viewerBoth = await forge.createToken(viewer, ['read:user', 'read:organization']);
      const hiddenMembership = await forge.request('GET', `/users/${owner.username}/orgs`, {
        token: viewerBoth,
      });
      expect(hiddenMembership.body).toEqual([]);
      const asAdmin = await forge.request('GET', `/users/${owner.username}/orgs`, {
        token: forge.admin.token,
      });
      expect(asAdmin.body.map((o: { name: string }) => o.name)).toEqual([org.name]);
    });
  });
});

describe('user search failure', () => {
  let forge: TestForge;
  beforeAll(async () => {
    forge = await startTestForge();
  });
  afterAll(() => forge.close());

  it('answers 500 with {ok:false, error} when the database fails', async () => {
    // Break the table the search reads; anonymous requests need no other table.
    await sql`ALTER TABLE ${sql.table('user')} RENAME TO user_gone`.execute(forge.ctx.db);
    try {
      const res = await forge.request('GET', '/users/search?q=abc');
      expect(res.status).toBe(500);
      expect(res.body.ok).toBe(false);
      expect(typeof res.body.error).toBe('string');
      expect(res.body.error).not.toBe('');
      expect(Object.keys(res.body)).toEqual(['ok', 'error']);
    } finally {
      await sql`ALTER TABLE user_gone RENAME TO ${sql.table('user')}`.execute(forge.ctx.db);
    }
  });
});
