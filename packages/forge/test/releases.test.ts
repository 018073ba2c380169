import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGit } from '../src/git/command.js';
import { repositoryPath } from '../src/git/repository.js';
import { startTestForge, type TestForge, type TestUser, uniqueName } from './harness.js';
import { createRepo, type TestRepo } from './repo-fixtures.js';

/** The seed's Releases section, rule by rule, plus Gitea's api_releases_test.go cases (reference §9.1). */
describe('releases', () => {
  let forge: TestForge;
  let owner: TestUser;
  let ownerToken: string;
  let ownerReadToken: string;
  let reader: TestUser;
  let readerToken: string;
  let writer: TestUser;
  let writerToken: string;
  let stranger: TestUser;
  let strangerToken: string;
  let repo: TestRepo;
  let published: { id: number };
  let draft: { id: number };
  let prerelease: { id: number };

  const gitDirOf = (r: TestRepo) =>
    repositoryPath(join(forge.ctx.config.dataDir, 'repositories'), r.owner, r.name);
  const release = (token: string | undefined, r: TestRepo, body: Record<string, unknown>) =>
    forge.request('POST', `${r.path}/releases`, { token, body });

  beforeAll(async () => {
    forge = await startTestForge();
    owner = await forge.createUser();
    reader = await forge.createUser();
    writer = await forge.createUser();
    stranger = await forge.createUser();
    ownerToken = await forge.createToken(owner, ['write:repository', 'write:user']);
    ownerReadToken = await forge.createToken(owner, ['read:repository']);
    readerToken = await forge.createToken(reader, ['write:repository']);
    writerToken = await forge.createToken(writer, ['write:repository']);
    strangerToken = await forge.createToken(stranger, ['write:repository']);
    repo = await createRepo(forge, ownerToken, { name: 'repo1' });
    for (const [user, permission] of [
      [reader, 'read'],
      [writer, 'write'],
    ] as const) {
      const res = await forge.request('PUT', `${repo.path}/collaborators/${user.username}`, {
        token: ownerToken,
        body: { permission },
      });
      expect(res.status).toBe(204);
    }
    published = (
      await release(ownerToken, repo, { tag_name: 'v1.1', name: 'testing-release', body: 'notes' })
    ).body;
    draft = (
      await release(ownerToken, repo, { tag_name: 'draft-release', name: 'draft-release', draft: true })
    ).body;
    prerelease = (await release(ownerToken, repo, { tag_name: 'v1.2-rc1', name: 'pre', prerelease: true }))
      .body;
    // A tag-only record: a tag created through the tags API.
    expect(
      (
        await forge.request('POST', `${repo.path}/tags`, {
          token: ownerToken,
          body: { tag_name: 'bare-tag' },
        })
      ).status,
    ).toBe(201);
  });
  afterAll(() => forge.close());

  describe('rule 1: list', () => {
    it('rule 1: tag-only records are never listed', async () => {
      const res = await forge.request('GET', `${repo.path}/releases`, { token: ownerToken });
      expect(res.status).toBe(200);
      expect(res.body.map((r: { tag_name: string }) => r.tag_name)).not.toContain('bare-tag');
    });

    it('TestAPIListReleases: a read:repository token of the owner sees all three, newest first', async () => {
      const res = await forge.request('GET', `${repo.path}/releases`, { token: ownerReadToken });
      expect(res.status).toBe(200);
      expect(
        res.body.map((r: { id: number; draft: boolean; prerelease: boolean }) => [
          r.id,
          r.draft,
          r.prerelease,
        ]),
      ).toEqual([
        [prerelease.id, false, true],
        [draft.id, true, false],
        [published.id, false, false],
      ]);
      for (const r of res.body) {
        expect(r.upload_url.endsWith(`/api/v1/repos/${owner.username}/repo1/releases/${r.id}/assets`)).toBe(
          true,
        );
      }
      expect(res.headers.get('x-total-count')).toBe('3');
    });

    it('rule 1: drafts are listed only for writers', async () => {
      const visible = async (token?: string) =>
        (await forge.request('GET', `${repo.path}/releases`, { token })).body.map(
          (r: { tag_name: string }) => r.tag_name,
        );
      expect(await visible()).toEqual(['v1.2-rc1', 'v1.1']);
      expect(await visible(readerToken)).toEqual(['v1.2-rc1', 'v1.1']);
      expect(await visible(strangerToken)).toEqual(['v1.2-rc1', 'v1.1']);
      expect(await visible(writerToken)).toEqual(['v1.2-rc1', 'draft-release', 'v1.1']);
    });

    it('rule 1: draft and pre-release filter when given (Gitea filter table)', async () => {
      const count = async (query: string, token?: string) => {
        const res = await forge.request('GET', `${repo.path}/releases${query}`, { token });
        expect(res.status).toBe(200);
        expect(res.headers.get('x-total-count')).toBe(String(res.body.length));
        return res.body.length;
      };
      expect(await count('?draft=true')).toBe(0);
      expect(await count('?draft=true', ownerToken)).toBe(1);
      expect(await count('?draft=false', ownerToken)).toBe(2);
      expect(await count('?draft=false&pre-release=false', ownerToken)).toBe(1);
      expect(await count('?pre-release=true', ownerToken)).toBe(1);
      expect(await count('?draft=true&pre-release=true', ownerToken)).toBe(0);
      expect(await count('?pre-release=false')).toBe(1);
    });

    it('rule 1: Link and X-Total-Count use the count after filtering', async () => {
      const res = await forge.request('GET', `${repo.path}/releases?draft=false&limit=1`, {
        token: ownerToken,
      });
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(1);
      expect(res.headers.get('x-total-count')).toBe('2');
      const base = `${forge.appUrl}api/v1/repos/${owner.username}/repo1/releases`;
      expect(res.headers.get('link')).toBe(
        `<${base}?draft=false&limit=1&page=2>; rel="next",<${base}?draft=false&limit=1&page=2>; rel="last"`,
      );
      const anon = await forge.request('GET', `${repo.path}/releases?limit=1`);
      expect(anon.headers.get('x-total-count')).toBe('2');
      const past = await forge.request('GET', `${repo.path}/releases?page=9`, { token: ownerToken });
      expect(past.body).toEqual([]);
      expect(past.headers.get('x-total-count')).toBe('3');
      const second = await forge.request('GET', `${repo.path}/releases?page=2&limit=2`, {
        token: ownerToken,
      });
      expect(second.body.map((r: { id: number }) => r.id)).toEqual([published.id]);
      expect(second.headers.get('x-total-count')).toBe('3');
    });
  });

  describe('rule 1: totals follow every write', () => {
    it('X-Total-Count follows create, publish, prerelease edit, delete and the tag-only conversion', async () => {
      const other = await createRepo(forge, ownerToken);
      const total = async (query: string, token?: string) => {
        const res = await forge.request('GET', `${other.path}/releases${query}`, { token });
        expect(res.status).toBe(200);
        return {
          total: res.headers.get('x-total-count'),
          tags: res.body.map((r: { tag_name: string }) => r.tag_name),
        };
      };
      expect(await total('')).toEqual({ total: '0', tags: [] });
      const a = (await release(ownerToken, other, { tag_name: 'a' })).body;
      const b = (await release(ownerToken, other, { tag_name: 'b', draft: true })).body;
      // Full pages (limit=1) take the total from the count, short pages from the page itself.
      expect(await total('?limit=1')).toEqual({ total: '1', tags: ['a'] });
      expect(await total('?limit=1', ownerToken)).toEqual({ total: '2', tags: ['b'] });
      // Publishing the draft makes it count for everyone.
      const edit = (id: number, body: Record<string, unknown>) =>
        forge.request('PATCH', `${other.path}/releases/${id}`, { token: ownerToken, body });
      expect((await edit(b.id, { draft: false })).status).toBe(200);
      expect((await total('?limit=1')).total).toBe('2');
      expect((await edit(a.id, { prerelease: true })).status).toBe(200);
      expect((await total('?limit=1&pre-release=true')).total).toBe('1');
      expect((await total('?limit=1&pre-release=false')).total).toBe('1');
      // A deleted release is tag-only: no longer listed nor counted; converting it back counts it again.
      const del = await forge.request('DELETE', `${other.path}/releases/${a.id}`, { token: ownerToken });
      expect(del.status).toBe(204);
      expect(await total('?limit=1')).toEqual({ total: '1', tags: ['b'] });
      expect((await total('?limit=1&pre-release=true')).total).toBe('0');
      expect((await release(ownerToken, other, { tag_name: 'a' })).status).toBe(201);
      expect((await total('?limit=1')).total).toBe('2');
    });
  });

  describe('rule 2: latest', () => {
    it('TestAPIGetLatestRelease: newest release that is neither draft nor prerelease', async () => {
      const res = await forge.request('GET', `${repo.path}/releases/latest`);
      expect(res.status).toBe(200);
      expect(res.body.name).toBe('testing-release');
      expect(res.body.id).toBe(published.id);
    });

    it('rule 2: a deleted publisher of the latest release shows as Ghost, as in the list', async () => {
      const other = await createRepo(forge, ownerToken);
      const gone = await forge.createUser();
      const goneToken = await forge.createToken(gone, ['write:repository']);
      await forge.request('PUT', `${other.path}/collaborators/${gone.username}`, {
        token: ownerToken,
        body: { permission: 'write' },
      });
      expect((await release(goneToken, other, { tag_name: 'g1' })).status).toBe(201);
      const before = await forge.request('GET', `${other.path}/releases/latest`);
      expect(before.body.author.login).toBe(gone.username);
      const removed = await forge.request('DELETE', `/admin/users/${gone.username}`, {
        token: forge.admin.token,
      });
      expect(removed.status).toBe(204);
      const after = await forge.request('GET', `${other.path}/releases/latest`);
      expect(after.status).toBe(200);
      expect(after.body.author).toMatchObject({ id: -1, login: 'Ghost' });
      const list = await forge.request('GET', `${other.path}/releases`);
      expect(list.body[0].author).toEqual(after.body.author);
      expect(after.body.assets).toEqual([]);
    });

    it('rule 2: 404 when only drafts, prereleases and tag-only records exist', async () => {
      const other = await createRepo(forge, ownerToken);
      expect((await release(ownerToken, other, { tag_name: 'd', draft: true })).status).toBe(201);
      expect((await release(ownerToken, other, { tag_name: 'p', prerelease: true })).status).toBe(201);
      await forge.request('POST', `${other.path}/tags`, { token: ownerToken, body: { tag_name: 't' } });
      const res = await forge.request('GET', `${other.path}/releases/latest`);
      expect(res.status).toBe(404);
      expect(res.body.message).toBeTruthy();
    });
  });

  describe('rule 3: get, edit and delete need a release of this repository', () => {
    it('rule 3: unknown ids and ids of another repository are 404', async () => {
      const other = await createRepo(forge, ownerToken);
      for (const path of [`${repo.path}/releases/999999`, `${other.path}/releases/${published.id}`]) {
        expect((await forge.request('GET', path, { token: ownerToken })).status).toBe(404);
        expect((await forge.request('PATCH', path, { token: ownerToken, body: { name: 'x' } })).status).toBe(
          404,
        );
        expect((await forge.request('DELETE', path, { token: ownerToken })).status).toBe(404);
      }
    });

    it('rule 3: a tag-only record is 404 for get, edit and delete', async () => {
      const created = await release(ownerToken, repo, { tag_name: 'gone-back', name: 'temporary' });
      expect(created.status).toBe(201);
      const path = `${repo.path}/releases/${created.body.id}`;
      expect((await forge.request('DELETE', path, { token: ownerToken })).status).toBe(204);
      expect((await forge.request('GET', path, { token: ownerToken })).status).toBe(404);
      expect((await forge.request('PATCH', path, { token: ownerToken, body: { name: 'x' } })).status).toBe(
        404,
      );
      expect((await forge.request('DELETE', path, { token: ownerToken })).status).toBe(404);
      expect((await forge.request('GET', `${repo.path}/releases/tags/gone-back`)).status).toBe(404);
    });

    it('CVE-2026-27660: a draft by id is 404 (same body as a missing id) unless the caller may write or published it', async () => {
      const path = `${repo.path}/releases/${draft.id}`;
      const missing = await forge.request('GET', `${repo.path}/releases/999999`);
      for (const token of [undefined, readerToken, strangerToken]) {
        const res = await forge.request('GET', path, { token });
        expect(res.status).toBe(404);
        expect(res.body).toEqual(missing.body);
      }
      const asWriter = await forge.request('GET', path, { token: writerToken });
      expect(asWriter.status).toBe(200);
      expect(asWriter.body.draft).toBe(true);
      expect((await forge.request('GET', path, { token: ownerReadToken })).status).toBe(200);
    });

    it('CVE-2026-27660: the publisher of a draft still reads it after losing write access; others do not', async () => {
      const author = await forge.createUser();
      const authorToken = await forge.createToken(author, ['write:repository']);
      // A repository of its own, so the watcher counts of later tests stay as they are.
      const own = await createRepo(forge, ownerToken);
      const grant = (permission: string) =>
        forge.request('PUT', `${own.path}/collaborators/${author.username}`, {
          token: ownerToken,
          body: { permission },
        });
      expect((await grant('write')).status).toBe(204);
      const made = await release(authorToken, own, { tag_name: uniqueName('own-draft'), draft: true });
      expect(made.status).toBe(201);
      expect((await grant('read')).status).toBe(204);
      const path = `${own.path}/releases/${made.body.id}`;
      expect((await forge.request('GET', path, { token: authorToken })).status).toBe(200);
      const byTag = `${own.path}/releases/tags/${made.body.tag_name}`;
      expect((await forge.request('GET', byTag, { token: authorToken })).status).toBe(200);
      expect((await forge.request('GET', path, { token: readerToken })).status).toBe(404);
      expect((await forge.request('GET', path)).status).toBe(404);
      // The list keeps the seed's rule 1: drafts only for writers.
      const listed = await forge.request('GET', `${own.path}/releases?limit=50`, { token: authorToken });
      expect(listed.body.map((r: { id: number }) => r.id)).not.toContain(made.body.id);
    });
  });

  describe('rule 4: create', () => {
    it('rule 4: an empty repository answers 422', async () => {
      const empty = await createRepo(forge, ownerToken, { autoInit: false });
      const res = await release(ownerToken, empty, { tag_name: 'v1' });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ message: 'repo is empty', url: `${forge.appUrl}api/swagger` });
    });

    it('TestAPICreateReleaseToDefaultBranch: an empty target is the default branch; the caller publishes', async () => {
      const res = await release(writerToken, repo, { tag_name: 'v0.0.1', name: 'first', body: 'b' });
      expect(res.status).toBe(201);
      expect(res.body.target_commitish).toBe('main');
      expect(res.body.author.login).toBe(writer.username);
      const branch = await forge.request('GET', `${repo.path}/branches/main`);
      const tag = await forge.request('GET', `${repo.path}/tags/v0.0.1`);
      expect(tag.status).toBe(200);
      expect(tag.body.commit.sha).toBe(branch.body.commit.id);
    });

    it('rule 4: a release that already exists is 409', async () => {
      for (const tag of ['v1.1', 'V1.1', 'draft-release']) {
        const res = await release(ownerToken, repo, { tag_name: tag });
        expect(res.status, tag).toBe(409);
      }
    });

    it('TestAPICreateReleaseGivenInvalidTarget: an unknown target is 404 and creates nothing', async () => {
      const res = await release(ownerToken, repo, {
        tag_name: 'i-point-to-an-invalid-target',
        target_commitish: 'invalid-target',
      });
      expect(res.status).toBe(404);
      expect(res.body.message).toMatch(/^target "invalid-target" not found/);
      expect((await forge.request('GET', `${repo.path}/tags/i-point-to-an-invalid-target`)).status).toBe(404);
      expect((await release(ownerToken, repo, { tag_name: 'i-point-to-an-invalid-target' })).status).toBe(
        201,
      );
    });

    it('rule 4: a protected tag name is 422 and creates nothing', async () => {
      const protectedRepo = await createRepo(forge, ownerToken);
      await forge.request('PUT', `${protectedRepo.path}/collaborators/${writer.username}`, {
        token: ownerToken,
        body: { permission: 'write' },
      });
      const rule = await forge.request('POST', `${protectedRepo.path}/tag_protections`, {
        token: ownerToken,
        body: { name_pattern: 'v*', whitelist_usernames: [owner.username] },
      });
      expect(rule.status).toBe(201);
      // TestAPICreateProtectedTagRelease: a writer not on the allowlist.
      const res = await release(writerToken, protectedRepo, { tag_name: 'v0.0.1', draft: false });
      expect(res.status).toBe(422);
      expect(res.body.message).toBe('release tag name is protected [tag_name: v0.0.1]');
      expect((await forge.request('GET', `${protectedRepo.path}/tags/v0.0.1`)).status).toBe(404);
      expect((await forge.request('GET', `${protectedRepo.path}/releases`)).body).toEqual([]);
      // The allowlisted owner may; drafts create no tag, so protection does not apply to them.
      expect((await release(writerToken, protectedRepo, { tag_name: 'v0.0.2', draft: true })).status).toBe(
        201,
      );
      expect((await release(ownerToken, protectedRepo, { tag_name: 'v0.0.1' })).status).toBe(201);
    });

    it('TestAPICreateReleaseToDefaultBranchOnExistingTag: a git tag without a record is used as is', async () => {
      const other = await createRepo(forge, ownerToken);
      await runGit(['tag', 'v0.0.1', 'main'], { gitDir: gitDirOf(other) });
      const res = await release(ownerToken, other, { tag_name: 'v0.0.1', name: 'existing' });
      expect(res.status).toBe(201);
      expect(res.body.target_commitish).toBe('main');
    });

    it('createNewReleaseUsingAPI: the response matches the stored release exactly', async () => {
      const res = await release(ownerToken, repo, {
        tag_name: 'shape-check',
        name: 'Shape',
        body: 'Body text',
        draft: false,
        prerelease: false,
        target_commitish: 'main',
      });
      expect(res.status).toBe(201);
      const id = res.body.id;
      const html = `${forge.appUrl}${owner.username}/repo1`;
      const api = `${forge.appUrl}api/v1/repos/${owner.username}/repo1/releases/${id}`;
      expect(res.body).toEqual({
        id,
        tag_name: 'shape-check',
        target_commitish: 'main',
        name: 'Shape',
        body: 'Body text',
        url: api,
        html_url: `${html}/releases/tag/shape-check`,
        tarball_url: `${html}/archive/shape-check.tar.gz`,
        zipball_url: `${html}/archive/shape-check.zip`,
        upload_url: `${api}/assets`,
        draft: false,
        prerelease: false,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        published_at: res.body.created_at,
        author: expect.objectContaining({
          id: owner.id,
          login: owner.username,
          // Rendered for no viewer: the placeholder address, never the real one.
          email: expect.stringMatching(new RegExp(`^${owner.username.toLowerCase()}@noreply\\.`)),
        }),
        assets: [],
      });
      const fetched = await forge.request('GET', `${repo.path}/releases/${id}`);
      expect(fetched.body).toEqual(res.body);
    });
  });

  describe('rule 5 and the tag-only → release transition', () => {
    it('rule 5: a tag-only record becomes a release with the request fields; publisher is the caller', async () => {
      const tag = await forge.request('POST', `${repo.path}/tags`, {
        token: writerToken,
        body: { tag_name: 'from-tag', message: 'annotated' },
      });
      expect(tag.status).toBe(201);
      const res = await release(ownerToken, repo, {
        tag_name: 'from-tag',
        name: 'Converted',
        body: 'Converted notes',
        prerelease: true,
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        tag_name: 'from-tag',
        name: 'Converted',
        body: 'Converted notes',
        draft: false,
        prerelease: true,
        // The target is taken from the request as given: no default-branch fallback here.
        target_commitish: '',
      });
      expect(res.body.author.login).toBe(owner.username);
      const list = await forge.request('GET', `${repo.path}/releases?pre-release=true`);
      expect(list.body.map((r: { tag_name: string }) => r.tag_name)).toContain('from-tag');
      expect((await forge.request('GET', `${repo.path}/tags/from-tag`)).body.id).toBe(tag.body.id);
    });

    it('rule 5: converting takes the target as given and may produce a draft', async () => {
      await forge.request('POST', `${repo.path}/tags`, { token: ownerToken, body: { tag_name: 'to-draft' } });
      const res = await release(ownerToken, repo, {
        tag_name: 'to-draft',
        draft: true,
        target_commitish: 'main',
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ draft: true, target_commitish: 'main' });
    });

    it('rule 5: when the record exists and is not tag-only the answer is 409', async () => {
      const res = await release(ownerToken, repo, { tag_name: 'from-tag' });
      expect(res.status).toBe(409);
    });
  });

  describe('rule 6: edit', () => {
    it('TestAPICreateAndUpdateRelease: a tag made directly in git, released on its sha, then edited', async () => {
      const sha = (await runGit(['rev-parse', 'main'], { gitDir: gitDirOf(repo) })).stdout.trim();
      await runGit(['tag', 'v0.0.9', sha], { gitDir: gitDirOf(repo) });
      const created = await release(ownerToken, repo, {
        tag_name: 'v0.0.9',
        name: 'v0.0.9',
        body: 'test',
        target_commitish: sha,
      });
      expect(created.status).toBe(201);
      const fetched = await forge.request('GET', `${repo.path}/releases/${created.body.id}`);
      expect(fetched.body).toMatchObject({ tag_name: 'v0.0.9', name: 'v0.0.9', body: 'test' });
      const edited = await forge.request('PATCH', `${repo.path}/releases/${created.body.id}`, {
        token: ownerToken,
        body: {
          tag_name: 'v0.0.9',
          name: 'v0.0.9',
          body: 'updated',
          draft: false,
          prerelease: false,
          target_commitish: sha,
        },
      });
      expect(edited.status).toBe(200);
      expect(edited.body.body).toBe('updated');
      expect((await forge.request('GET', `${repo.path}/releases/${created.body.id}`)).body.body).toBe(
        'updated',
      );
    });

    it('rule 6: empty strings and absent booleans leave fields unchanged', async () => {
      const created = await release(ownerToken, repo, {
        tag_name: 'edit-me',
        name: 'Title',
        body: 'Note',
        prerelease: true,
      });
      const path = `${repo.path}/releases/${created.body.id}`;
      const res = await forge.request('PATCH', path, {
        token: ownerToken,
        body: { name: '', body: '', tag_name: '', target_commitish: '' },
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ name: 'Title', body: 'Note', tag_name: 'edit-me', prerelease: true });
      const flags = await forge.request('PATCH', path, { token: ownerToken, body: { prerelease: false } });
      expect(flags.body).toMatchObject({ name: 'Title', prerelease: false, draft: false });
    });

    it('rule 6: publishing a draft creates its tag and returns the reloaded release', async () => {
      const created = await release(ownerToken, repo, { tag_name: 'publish-me', draft: true, name: 'Soon' });
      expect((await forge.request('GET', `${repo.path}/tags/publish-me`)).status).toBe(404);
      const res = await forge.request('PATCH', `${repo.path}/releases/${created.body.id}`, {
        token: writerToken,
        body: { draft: false },
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ draft: false, name: 'Soon', tag_name: 'publish-me' });
      expect(res.body.author.login).toBe(writer.username);
      expect((await forge.request('GET', `${repo.path}/tags/publish-me`)).status).toBe(200);
    });

    it('readers may not edit (403) and anonymous callers must sign in (401)', async () => {
      const path = `${repo.path}/releases/${published.id}`;
      expect((await forge.request('PATCH', path, { token: readerToken, body: { name: 'x' } })).status).toBe(
        403,
      );
      expect((await forge.request('PATCH', path, { body: { name: 'x' } })).status).toBe(401);
      expect((await release(readerToken, repo, { tag_name: 'nope' })).status).toBe(403);
    });
  });

  describe('rule 7: delete', () => {
    it('rule 7: deleting a protected tag without permission is 422; with permission 204, tag kept', async () => {
      const protectedRepo = await createRepo(forge, ownerToken);
      await forge.request('PUT', `${protectedRepo.path}/collaborators/${writer.username}`, {
        token: ownerToken,
        body: { permission: 'write' },
      });
      const created = await release(ownerToken, protectedRepo, { tag_name: 'stable-1', name: 'Stable' });
      expect(created.status).toBe(201);
      await forge.request('POST', `${protectedRepo.path}/tag_protections`, {
        token: ownerToken,
        body: { name_pattern: 'stable-*', whitelist_usernames: [owner.username] },
      });
      const path = `${protectedRepo.path}/releases/${created.body.id}`;
      const denied = await forge.request('DELETE', path, { token: writerToken });
      expect(denied.status).toBe(422);
      expect(denied.body.message).toBe('user not allowed to delete protected tag');
      expect((await forge.request('GET', path)).status).toBe(200);
      const deleted = await forge.request('DELETE', path, { token: ownerToken });
      expect(deleted.status).toBe(204);
      expect(deleted.text).toBe('');
      expect((await forge.request('GET', `${protectedRepo.path}/tags/stable-1`)).status).toBe(200);
    });

    it('TestAPIDeleteReleaseByTagName: 204, then 404, then the tag itself can go', async () => {
      expect((await release(ownerToken, repo, { tag_name: 'release-tag' })).status).toBe(201);
      const byTag = `${repo.path}/releases/tags/release-tag`;
      expect((await forge.request('DELETE', byTag, { token: ownerToken })).status).toBe(204);
      expect((await forge.request('DELETE', byTag, { token: ownerToken })).status).toBe(404);
      expect(
        (await forge.request('DELETE', `${repo.path}/tags/release-tag`, { token: ownerToken })).status,
      ).toBe(204);
      expect((await forge.request('GET', `${repo.path}/tags/release-tag`)).status).toBe(404);
    });

    it('a deleted release is tag-only again: POST /tags is 409, POST /releases converts it', async () => {
      const created = await release(ownerToken, repo, { tag_name: 'again', name: 'One' });
      await forge.request('DELETE', `${repo.path}/releases/${created.body.id}`, { token: ownerToken });
      expect(
        (await forge.request('POST', `${repo.path}/tags`, { token: ownerToken, body: { tag_name: 'again' } }))
          .status,
      ).toBe(409);
      const reconverted = await release(ownerToken, repo, { tag_name: 'again', name: 'Two' });
      expect(reconverted.status).toBe(201);
      expect(reconverted.body).toMatchObject({ id: created.body.id, name: 'Two' });
    });
  });

  describe('get by tag', () => {
    it('TestAPIGetReleaseByTag: 200 for a release, 404 with a message for an unknown tag', async () => {
      const res = await forge.request('GET', `${repo.path}/releases/tags/v1.1`);
      expect(res.status).toBe(200);
      expect(res.body.name).toBe('testing-release');
      const missing = await forge.request('GET', `${repo.path}/releases/tags/nonexistingtag`);
      expect(missing.status).toBe(404);
      expect(missing.body.message).not.toBe('');
    });

    it('TestAPIGetDraftReleaseByTag: drafts only for writers and their publisher', async () => {
      const path = `${repo.path}/releases/tags/draft-release`;
      expect((await forge.request('GET', path)).status).toBe(404);
      expect((await forge.request('GET', path, { token: readerToken })).status).toBe(404);
      const asWriter = await forge.request('GET', path, { token: writerToken });
      expect(asWriter.status).toBe(200);
      expect(asWriter.body.name).toBe('draft-release');
      expect((await forge.request('GET', path, { token: ownerReadToken })).status).toBe(200);
    });
  });

  describe('visibility', () => {
    it('a private repository is 404 to those who cannot read it', async () => {
      const hidden = await createRepo(forge, ownerToken, { private: true });
      await release(ownerToken, hidden, { tag_name: 'v1' });
      for (const token of [undefined, strangerToken]) {
        for (const suffix of ['/releases', '/releases/latest', '/releases/tags/v1']) {
          expect((await forge.request('GET', `${hidden.path}${suffix}`, { token })).status).toBe(404);
        }
      }
      expect((await forge.request('GET', `${hidden.path}/releases`, { token: ownerToken })).status).toBe(200);
    });

    it('a repository made private answers 404 to anonymous readers of its releases at once', async () => {
      const flipped = await createRepo(forge, ownerToken);
      await release(ownerToken, flipped, { tag_name: 'v1' });
      for (const suffix of ['/releases', '/releases/latest']) {
        expect((await forge.request('GET', `${flipped.path}${suffix}`)).status).toBe(200);
      }
      const patch = await forge.request('PATCH', flipped.path, {
        token: ownerToken,
        body: { private: true },
      });
      expect(patch.status).toBe(200);
      for (const suffix of ['/releases', '/releases/latest']) {
        expect((await forge.request('GET', `${flipped.path}${suffix}`)).status).toBe(404);
      }
    });

    it('a token without the repository scope is refused with 403 before the lookup', async () => {
      const userOnly = await forge.createToken(owner, ['read:user']);
      const res = await forge.request('GET', `/repos/${owner.username}/does-not-exist/releases`, {
        token: userOnly,
      });
      expect(res.status).toBe(403);
      expect(res.body.message).toMatch(/^token does not have at least one of required scope\(s\)/);
    });
  });

  describe('concurrency and activity', () => {
    it('30 parallel creates of one tag: exactly one 201, the rest 409, one tag and one row', async () => {
      const tagName = uniqueName('race');
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          release(i % 2 ? ownerToken : writerToken, repo, { tag_name: tagName, name: `attempt ${i}` }),
        ),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(29);
      const winner = results.find((r) => r.status === 201)!;
      const byTag = await forge.request('GET', `${repo.path}/releases/tags/${tagName}`);
      expect(byTag.body.id).toBe(winner.body.id);
      const rows = await forge.ctx.db
        .selectFrom('release')
        .select('id')
        .where('lower_tag_name', '=', tagName.toLowerCase())
        .execute();
      expect(rows).toHaveLength(1);
      const tags = await runGit(['tag', '--list', tagName], { gitDir: gitDirOf(repo) });
      expect(tags.stdout.trim()).toBe(tagName);
    });

    it('publishing records publish_release for the actor and the watchers who can read', async () => {
      const tagName = uniqueName('feed');
      const res = await release(writerToken, repo, { tag_name: tagName, name: 'Feed title' });
      expect(res.status).toBe(201);
      const rows = await forge.ctx.db
        .selectFrom('action')
        .select(['user_id', 'act_user_id', 'op_type', 'ref_name', 'content', 'is_private'])
        .where('ref_name', 'in', [tagName, `refs/tags/${tagName}`])
        .execute();
      const publish = rows.filter((r) => r.op_type === 24);
      expect(publish.map((r) => r.user_id).sort((a, b) => a - b)).toEqual(
        [owner.id, reader.id, writer.id].sort((a, b) => a - b),
      );
      for (const row of publish) {
        expect(row).toMatchObject({
          act_user_id: writer.id,
          ref_name: tagName,
          content: 'Feed title',
          is_private: 0,
        });
      }
      expect(rows.filter((r) => r.op_type === 9 && r.user_id === writer.id)).toHaveLength(1);
      // The users API's feed shows it, with the repository rendered.
      const feed = await forge.request('GET', `/users/${reader.username}/activities/feeds`, {
        basic: reader,
      });
      expect(feed.status).toBe(200);
      const entry = feed.body.find((a: { op_type: string; ref_name: string }) => a.ref_name === tagName);
      expect(entry).toMatchObject({
        op_type: 'publish_release',
        act_user: { login: writer.username },
        content: 'Feed title',
        repo: {
          full_name: `${owner.username}/repo1`,
          permissions: { admin: false, push: false, pull: true },
        },
      });
      // Drafts publish nothing.
      const draftTag = uniqueName('quiet');
      await release(writerToken, repo, { tag_name: draftTag, draft: true });
      const quiet = await forge.ctx.db
        .selectFrom('action')
        .select('id')
        .where('ref_name', '=', draftTag)
        .execute();
      expect(quiet).toEqual([]);
    });
  });
});
