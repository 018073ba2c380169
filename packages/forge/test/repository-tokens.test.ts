import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGit } from '../src/git/command.js';
import { startTestForge, type TestForge, type TestUser } from './harness.js';
import { cloneUrl, createRepo, scratchDir, type TestRepo } from './repo-fixtures.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');

/** Repository-scoped tokens (Forgejo's shape): a token reaches only the repositories it lists. */
describe('repository-scoped tokens', () => {
  let forge: TestForge;
  let owner: TestUser;
  let ownerToken: string;
  let listed: TestRepo;
  let otherPrivate: TestRepo;
  let otherPublic: TestRepo;
  let scratch: Awaited<ReturnType<typeof scratchDir>>;

  const basic = (user: TestUser) => ({ username: user.username, password: user.password });
  const createScoped = async (
    user: TestUser,
    scopes: string[],
    repositories: Array<{ owner: string; name: string }>,
  ) =>
    forge.request('POST', `/users/${user.username}/tokens`, {
      basic: basic(user),
      body: { name: `scoped-${Math.random().toString(36).slice(2)}`, scopes, repositories },
    });

  beforeAll(async () => {
    forge = await startTestForge();
    owner = await forge.createUser();
    ownerToken = await forge.createToken(owner, ['write:repository', 'write:user']);
    listed = await createRepo(forge, ownerToken, { private: true });
    otherPrivate = await createRepo(forge, ownerToken, { private: true });
    otherPublic = await createRepo(forge, ownerToken);
    scratch = await scratchDir();
  });
  afterAll(async () => {
    await scratch.cleanup();
    await forge.close();
  });

  it('is created with a list of repositories, shown on the token object', async () => {
    const res = await createScoped(owner, ['write:repository'], [{ owner: listed.owner, name: listed.name }]);
    expect(res.status).toBe(201);
    const id = (await forge.request('GET', listed.path, { token: ownerToken })).body.id;
    expect(res.body.repositories).toEqual([
      { id, name: listed.name, owner: listed.owner, full_name: `${listed.owner}/${listed.name}` },
    ]);
    const list = await forge.request('GET', `/users/${owner.username}/tokens`, { basic: basic(owner) });
    const shown = list.body.find((token: { id: number }) => token.id === res.body.id);
    expect(shown.repositories).toEqual(res.body.repositories);
    expect(shown.sha1).toBe('');
    // An unlimited token keeps Gitea's exact shape.
    expect(
      list.body.find((token: { repositories?: unknown }) => token.repositories === undefined),
    ).toBeDefined();
  });

  it('refuses repositories its owner cannot see, and an empty list (400)', async () => {
    const stranger = await forge.createUser();
    const hidden = await createScoped(
      stranger,
      ['read:repository'],
      [{ owner: listed.owner, name: listed.name }],
    );
    expect(hidden.status).toBe(400);
    const missing = await createScoped(
      stranger,
      ['read:repository'],
      [{ owner: listed.owner, name: 'nope' }],
    );
    expect([missing.status, missing.body.message]).toEqual([
      400,
      hidden.body.message.replace(listed.name, 'nope'),
    ]);
    expect((await createScoped(stranger, ['read:repository'], [])).status).toBe(400);
  });

  it('reaches its repository; another private one is 404, a public one 403, also over git', async () => {
    const token = (
      await createScoped(
        owner,
        ['write:repository', 'read:user'],
        [{ owner: listed.owner, name: listed.name }],
      )
    ).body.sha1;
    expect((await forge.request('GET', listed.path, { token })).status).toBe(200);
    expect((await forge.request('GET', `${listed.path}/commits`, { token })).status).toBe(200);
    const write = await forge.request('POST', `${listed.path}/contents/scoped.txt`, {
      token,
      body: { content: b64('x') },
    });
    expect(write.status).toBe(201);
    expect((await forge.request('GET', otherPrivate.path, { token })).status).toBe(404);
    expect((await forge.request('GET', `${otherPrivate.path}/contents/README.md`, { token })).status).toBe(
      404,
    );
    const pub = await forge.request('GET', otherPublic.path, { token });
    expect([pub.status, pub.body.message]).toEqual([403, 'token is not allowed to access this repository']);
    expect(
      (
        await forge.request('POST', `${otherPublic.path}/contents/x.txt`, {
          token,
          body: { content: b64('x') },
        })
      ).status,
    ).toBe(403);
    // Listings show only the listed repository.
    const mine = await forge.request('GET', '/user/repos', { token });
    expect(mine.body.map((repo: { name: string }) => repo.name)).toEqual([listed.name]);
    // git over smart HTTP: the listed repository clones, the other private one does not exist.
    const ok = join(scratch.dir, 'listed');
    await runGit(['clone', '--quiet', cloneUrl(forge, listed, { user: owner.username, secret: token }), ok]);
    const refused = await runGit(
      [
        'clone',
        '--quiet',
        cloneUrl(forge, otherPrivate, { user: owner.username, secret: token }),
        join(scratch.dir, 'other'),
      ],
      { okExitCodes: [128] },
    );
    expect(refused.exitCode).toBe(128);
  });

  it("carries no administrator powers and cannot Sudo; the admin's other tokens keep theirs", async () => {
    const admin = await forge.createUser({ admin: true });
    const repo = await createRepo(forge, await forge.createToken(admin, ['write:repository', 'write:user']));
    const scoped = (await createScoped(admin, ['all'], [{ owner: repo.owner, name: repo.name }])).body.sha1;
    const full = await forge.createToken(admin, ['all']);
    const adminRoute = await forge.request('GET', '/admin/users', { token: scoped });
    expect([adminRoute.status, adminRoute.body.message]).toEqual([403, 'user should be the site admin']);
    expect((await forge.request('GET', '/admin/users', { token: full })).status).toBe(200);
    const sudo = await forge.request('GET', '/user', { token: scoped, headers: { Sudo: owner.username } });
    expect([sudo.status, sudo.body]).toEqual([403, { message: 'Only administrators allowed to sudo.' }]);
    // The same user, scope and URL: answers kept for one credential are never given to the other.
    for (let round = 0; round < 2; round++) {
      expect((await forge.request('GET', '/user', { token: full })).body.is_admin).toBe(true);
      expect((await forge.request('GET', '/user', { token: scoped })).body.is_admin).toBe(false);
      expect((await forge.request('GET', otherPrivate.path, { token: full })).status).toBe(200);
      expect((await forge.request('GET', otherPrivate.path, { token: scoped })).status).toBe(404);
    }
  });

  it('combines with scopes and public-only', async () => {
    const readOnly = (
      await createScoped(owner, ['read:repository'], [{ owner: listed.owner, name: listed.name }])
    ).body.sha1;
    expect((await forge.request('GET', listed.path, { token: readOnly })).status).toBe(200);
    expect(
      (
        await forge.request('POST', `${listed.path}/contents/r.txt`, {
          token: readOnly,
          body: { content: b64('x') },
        })
      ).status,
    ).toBe(403);
    const publicOnly = (
      await createScoped(
        owner,
        ['write:repository', 'public-only'],
        [
          { owner: listed.owner, name: listed.name },
          { owner: otherPublic.owner, name: otherPublic.name },
        ],
      )
    ).body.sha1;
    expect((await forge.request('GET', listed.path, { token: publicOnly })).status).toBe(403);
    expect((await forge.request('GET', otherPublic.path, { token: publicOnly })).status).toBe(200);
  });

  it('revocation and deletion of a listed repository take effect at the next request', async () => {
    const doomed = await createRepo(forge, ownerToken, { private: true });
    const created = await createScoped(
      owner,
      ['write:repository'],
      [{ owner: doomed.owner, name: doomed.name }],
    );
    const token = created.body.sha1;
    expect((await forge.request('GET', doomed.path, { token })).status).toBe(200);
    expect((await forge.request('DELETE', doomed.path, { token: ownerToken })).status).toBe(204);
    // A new repository under the same name is not the listed one.
    await createRepo(forge, ownerToken, { private: true, name: doomed.name });
    expect((await forge.request('GET', doomed.path, { token })).status).toBe(404);
    const revoked = await createScoped(
      owner,
      ['write:repository'],
      [{ owner: listed.owner, name: listed.name }],
    );
    expect((await forge.request('GET', listed.path, { token: revoked.body.sha1 })).status).toBe(200);
    expect(
      (
        await forge.request('DELETE', `/users/${owner.username}/tokens/${revoked.body.id}`, {
          basic: basic(owner),
        })
      ).status,
    ).toBe(204);
    expect((await forge.request('GET', listed.path, { token: revoked.body.sha1 })).status).toBe(401);
  });
});
