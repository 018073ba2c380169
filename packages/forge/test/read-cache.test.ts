// Token lookups and the hot GET answers are kept while the database is unchanged (cache/read-view.ts;
// on SQLite and PostgreSQL alike, each with its own change stamp). Each test asks twice so the second answer
// comes from the cache, changes what the answer depends on — over HTTP, or on a second database
// connection as `forge admin` or another process would — and asks again: the answer must be that of
// the rows now.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ForgeDatabase, openDatabase } from '../src/store/database.js';
import { Visibility } from '../src/store/tables/accounts.js';
import { startTestForge, type TestForge, type TestUser } from './harness.js';
import { createRepo, type TestRepo } from './repo-fixtures.js';
import { testingPostgres } from './test-database.js';

let forge: TestForge;
/** A second connection to the forge's database (another process's view: SQLite's data_version path). */
let other: ForgeDatabase;
beforeAll(async () => {
  forge = await startTestForge();
  other = await openDatabase({ url: forge.ctx.config.databaseUrl, migrate: false });
}, 60_000);
afterAll(async () => {
  await other?.close();
  await forge?.close();
});

describe(`reads kept while the database is unchanged (${testingPostgres() ? 'PostgreSQL' : 'SQLite'})`, () => {
  let owner: TestUser;
  let ownerToken: string;
  let repo: TestRepo;

  beforeAll(async () => {
    owner = await forge.createUser();
    ownerToken = await forge.createToken(owner, ['write:repository', 'write:user', 'write:organization']);
    repo = await createRepo(forge, ownerToken);
    for (const tag of ['v1', 'v2']) {
      const created = await forge.request('POST', `${repo.path}/releases`, {
        token: ownerToken,
        body: { tag_name: tag, name: `release ${tag}` },
      });
      expect(created.status).toBe(201);
    }
  });

  /**
   * `GET path` three times with the same credentials: an answer is kept the second time its key misses
   * (cache/seen-keys.ts), so the third is answered from the cache when the route keeps answers.
   */
  const warmed = async (path: string, token?: string) => {
    const first = await forge.request('GET', path, token ? { token } : {});
    for (let i = 0; i < 2; i++) {
      const again = await forge.request('GET', path, token ? { token } : {});
      expect(again.status).toBe(first.status);
      expect(again.body).toEqual(first.body);
    }
    return first;
  };

  const tokenId = async (user: TestUser, name: string) => {
    const list = await forge.request<{ id: number; name: string }[]>(
      'GET',
      `/users/${user.username}/tokens`,
      {
        basic: user,
      },
    );
    return list.body.find((t) => t.name === name)!.id;
  };

  it('a token revoked over HTTP is refused on its next use', async () => {
    const user = await forge.createUser();
    const token = await forge.createToken(user, ['read:user'], 'revoked-over-http');
    expect((await warmed(`/users/${owner.username}`, token)).status).toBe(200);
    const revoke = await forge.request(
      'DELETE',
      `/users/${user.username}/tokens/${await tokenId(user, 'revoked-over-http')}`,
      {
        basic: user,
      },
    );
    expect(revoke.status).toBe(204);
    expect((await forge.request('GET', `/users/${owner.username}`, { token })).status).toBe(401);
  });

  it('a token deleted by another connection is refused on its next use', async () => {
    const user = await forge.createUser();
    const token = await forge.createToken(user, ['read:user'], 'deleted-elsewhere');
    expect((await warmed(`/users/${owner.username}`, token)).status).toBe(200);
    await other.db.deleteFrom('access_token').where('token_last_eight', '=', token.slice(-8)).execute();
    expect((await forge.request('GET', `/users/${owner.username}`, { token })).status).toBe(401);
  });

  it("a user deleted by another connection: their token is refused and others' answers change", async () => {
    const user = await forge.createUser();
    const token = await forge.createToken(user, ['read:user'], 'owner-deleted');
    expect((await warmed(`/users/${user.username}`, token)).status).toBe(200);
    expect((await warmed(`/users/${user.username}`, ownerToken)).status).toBe(200);
    await other.db.deleteFrom('access_token').where('uid', '=', user.id).execute();
    await other.db.deleteFrom('user').where('id', '=', user.id).execute();
    expect((await forge.request('GET', `/users/${user.username}`, { token })).status).toBe(401);
    expect((await forge.request('GET', `/users/${user.username}`, { token: ownerToken })).status).toBe(404);
  });

  it('a scope change made by another connection applies on the next use', async () => {
    const user = await forge.createUser();
    const token = await forge.createToken(user, ['read:user'], 'narrowed');
    expect((await warmed(`/users/${owner.username}`, token)).status).toBe(200);
    await other.db
      .updateTable('access_token')
      .set({ scope: 'read:repository' })
      .where('token_last_eight', '=', token.slice(-8))
      .execute();
    expect((await forge.request('GET', `/users/${owner.username}`, { token })).status).toBe(403);
  });

  it('a user in the path, kept with a token, follows changes by another connection but outlives writes elsewhere', async () => {
    const reader = await forge.createUser();
    const token = await forge.createToken(reader, ['read:user'], 'path-user');
    const target = await forge.createUser({ fullName: 'Path User' });
    // The token and the user are kept by the first request; later ones find both without a statement.
    expect((await warmed(`/users/${target.username}`, token)).body.full_name).toBe('Path User');
    // A write to a repository moves the database-wide stamp, not the account generation: still correct.
    const edit = await forge.request('PATCH', repo.path, {
      token: ownerToken,
      body: { description: 'edited' },
    });
    expect(edit.status).toBe(200);
    // Another spelling of the name: another kept answer's key, the same kept user row.
    const shouted = `/users/${target.username.toUpperCase()}`;
    expect((await forge.request('GET', shouted, { token })).body.full_name).toBe('Path User');
    await other.db
      .updateTable('user')
      .set({ full_name: 'Renamed Elsewhere' })
      .where('id', '=', target.id)
      .execute();
    expect((await forge.request('GET', shouted, { token })).body.full_name).toBe('Renamed Elsewhere');
    await other.db
      .updateTable('user')
      .set({ visibility: Visibility.Private })
      .where('id', '=', target.id)
      .execute();
    expect((await forge.request('GET', shouted, { token })).status).toBe(404);
  });

  it('every change a kept token or user depends on moves the account generation; a token use does not', async () => {
    const generation = async () =>
      Number(
        (
          await sql<{
            generation: string | number;
          }>`SELECT generation FROM account_generation WHERE id = 1`.execute(other.db)
        ).rows[0]!.generation,
      );
    const user = await forge.createUser();
    const token = await forge.createToken(user, ['read:user'], 'generations');
    const repoRow = await other.db
      .selectFrom('repository')
      .select('id')
      .where('lower_name', '=', repo.name.toLowerCase())
      .executeTakeFirstOrThrow();
    const tokenRow = await other.db
      .selectFrom('access_token')
      .select('id')
      .where('token_last_eight', '=', token.slice(-8))
      .executeTakeFirstOrThrow();
    const changes: Array<[string, () => Promise<unknown>]> = [
      [
        'a user updated',
        () => other.db.updateTable('user').set({ location: 'moved' }).where('id', '=', user.id).execute(),
      ],
      [
        'a token scope changed',
        () =>
          other.db.updateTable('access_token').set({ scope: 'all' }).where('id', '=', tokenRow.id).execute(),
      ],
      [
        'a token repository added',
        () =>
          other.db
            .insertInto('access_token_repository')
            .values({ token_id: tokenRow.id, repo_id: repoRow.id })
            .execute(),
      ],
      [
        'a token repository removed',
        () => other.db.deleteFrom('access_token_repository').where('token_id', '=', tokenRow.id).execute(),
      ],
      ['a token deleted', () => other.db.deleteFrom('access_token').where('id', '=', tokenRow.id).execute()],
      ['a user deleted', () => other.db.deleteFrom('user').where('id', '=', user.id).execute()],
    ];
    for (const [change, write] of changes) {
      const before = await generation();
      await write();
      expect({ change, moved: (await generation()) > before }).toEqual({ change, moved: true });
    }
    const before = await generation();
    await other.db.updateTable('access_token').set({ updated_unix: 1 }).where('uid', '=', owner.id).execute();
    expect(await generation()).toBe(before);
  });

  it('a repository made private over HTTP is 404 to an anonymous reader of its latest release', async () => {
    const own = await createRepo(forge, ownerToken);
    await forge.request('POST', `${own.path}/releases`, { token: ownerToken, body: { tag_name: 'v1' } });
    expect((await warmed(`${own.path}/releases/latest`)).status).toBe(200);
    expect((await warmed(`${own.path}/releases?limit=1`)).status).toBe(200);
    const hide = await forge.request('PATCH', own.path, { token: ownerToken, body: { private: true } });
    expect(hide.status).toBe(200);
    expect((await forge.request('GET', `${own.path}/releases/latest`)).status).toBe(404);
    expect((await forge.request('GET', `${own.path}/releases?limit=1`)).status).toBe(404);
  });

  it('a repository made private by another connection is 404 to an anonymous reader', async () => {
    const own = await createRepo(forge, ownerToken);
    await forge.request('POST', `${own.path}/releases`, { token: ownerToken, body: { tag_name: 'v1' } });
    expect((await warmed(`${own.path}/releases/latest`)).status).toBe(200);
    await other.db
      .updateTable('repository')
      .set({ is_private: 1 })
      .where('lower_name', '=', own.name.toLowerCase())
      .execute();
    expect((await forge.request('GET', `${own.path}/releases/latest`)).status).toBe(404);
  });

  it('a release changed over HTTP or by another connection is the next latest answer', async () => {
    const before = await warmed(`${repo.path}/releases/latest`);
    expect(before.body.tag_name).toBe('v2');
    const edit = await forge.request('PATCH', `${repo.path}/releases/${before.body.id}`, {
      token: ownerToken,
      body: { name: 'renamed over http' },
    });
    expect(edit.status).toBe(200);
    expect((await warmed(`${repo.path}/releases/latest`)).body.name).toBe('renamed over http');

    await other.db
      .updateTable('release')
      .set({ title: 'renamed elsewhere' })
      .where('id', '=', before.body.id)
      .execute();
    expect((await warmed(`${repo.path}/releases/latest`)).body.name).toBe('renamed elsewhere');
    const page = await warmed(`${repo.path}/releases?limit=1`);
    expect(page.body[0].name).toBe('renamed elsewhere');
  });

  it('a kept list answers with the same total and links', async () => {
    const first = await forge.request('GET', `${repo.path}/releases?limit=1`);
    await forge.request('GET', `${repo.path}/releases?limit=1`);
    const second = await forge.request('GET', `${repo.path}/releases?limit=1`);
    expect(second.text).toBe(first.text);
    for (const name of ['x-total-count', 'link', 'access-control-expose-headers', 'content-type']) {
      expect(second.headers.get(name)).toBe(first.headers.get(name));
    }
    expect(second.headers.get('x-total-count')).toBe('2');
    await forge.request('POST', `${repo.path}/releases`, { token: ownerToken, body: { tag_name: 'v3' } });
    expect((await forge.request('GET', `${repo.path}/releases?limit=1`)).headers.get('x-total-count')).toBe(
      '3',
    );
  });

  it('a public-only token does not get the answer kept for a full token of the same user', async () => {
    const secret = await createRepo(forge, ownerToken, { private: true });
    await forge.request('POST', `${secret.path}/releases`, { token: ownerToken, body: { tag_name: 'v1' } });
    const publicOnly = await forge.request<{ sha1: string }>('POST', `/users/${owner.username}/tokens`, {
      basic: owner,
      body: { name: 'public-only', scopes: ['public-only', 'read:repository', 'read:user'] },
    });
    expect(publicOnly.status).toBe(201);
    const full = await forge.createToken(owner, ['read:repository', 'read:user'], 'full-reader');
    expect((await warmed(`${secret.path}/releases/latest`, full)).status).toBe(200);
    expect(
      (await forge.request('GET', `${secret.path}/releases/latest`, { token: publicOnly.body.sha1 })).status,
    ).toBe(403);

    const hidden = await forge.createUser({ visibility: 'private' });
    const admin = forge.admin.token;
    expect((await warmed(`/users/${hidden.username}`, admin)).status).toBe(200);
    const search = await warmed(`/users/search?q=${hidden.username}`, admin);
    expect(search.body.data).toHaveLength(1);
    const adminPublicOnly = await forge.request<{ sha1: string }>(
      'POST',
      `/users/${forge.admin.username}/tokens`,
      {
        basic: forge.admin,
        body: { name: 'admin-public-only', scopes: ['public-only', 'read:user'] },
      },
    );
    expect(adminPublicOnly.status).toBe(201);
    const token = adminPublicOnly.body.sha1;
    expect((await forge.request('GET', `/users/${hidden.username}`, { token })).status).toBe(404);
    const narrowed = await forge.request('GET', `/users/search?q=${hidden.username}`, { token });
    expect(narrowed.body.data).toHaveLength(0);
  });

  it('a private user, a search and a feed follow a visibility change made by another connection', async () => {
    const user = await forge.createUser();
    await createRepo(forge, await forge.createToken(user, ['write:repository', 'write:user']));
    expect((await warmed(`/users/${user.username}`)).status).toBe(200);
    expect((await warmed(`/users/search?q=${user.username}`)).body.data).toHaveLength(1);
    const feed = await warmed(`/users/${user.username}/activities/feeds?limit=30`, ownerToken);
    expect(feed.body.length).toBeGreaterThan(0);
    await other.db
      .updateTable('user')
      .set({ visibility: Visibility.Private })
      .where('id', '=', user.id)
      .execute();
    expect((await forge.request('GET', `/users/${user.username}`)).status).toBe(404);
    expect((await forge.request('GET', `/users/search?q=${user.username}`)).body.data).toHaveLength(0);
    expect(
      (await forge.request('GET', `/users/${user.username}/activities/feeds?limit=30`, { token: ownerToken }))
        .status,
    ).toBe(404);
  });
});
