import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestForge, type TestForge, type TestUser } from './harness.js';
import { createRepo, type TestRepo } from './repo-fixtures.js';

/** Tags, tag protections (reference §6.6–6.7, §8.5) and the protected-tag matrix. */
describe('tags and tag protections', () => {
  let forge: TestForge;
  let owner: TestUser;
  let ownerToken: string;
  let releaser: TestUser;
  let developer: TestUser;
  let collaborator: TestUser;
  let siteAdmin: TestUser;
  const tokens = new Map<string, string>();
  let org: { name: string };
  let repo: TestRepo;

  beforeAll(async () => {
    forge = await startTestForge();
    owner = await forge.createUser();
    ownerToken = await forge.createToken(owner, ['write:repository', 'write:organization', 'write:user']);
    releaser = await forge.createUser();
    developer = await forge.createUser();
    collaborator = await forge.createUser();
    siteAdmin = await forge.createUser({ admin: true });
    for (const user of [owner, releaser, developer, collaborator, siteAdmin]) {
      tokens.set(user.username, await forge.createToken(user, ['write:repository']));
    }
    org = await forge.createOrg(ownerToken, {});
    // Teams covering every repository of the organisation, created through the API.
    const team = async (name: string) => {
      const res = await forge.request('POST', `/orgs/${org.name}/teams`, {
        token: ownerToken,
        body: {
          name,
          permission: 'write',
          units: ['repo.code', 'repo.releases'],
          includes_all_repositories: true,
        },
      });
      expect(res.status).toBe(201);
      return res.body as { id: number };
    };
    await forge.addTeamMember(ownerToken, (await team('releasers')).id, releaser.username);
    await forge.addTeamMember(ownerToken, (await team('devs')).id, developer.username);
    repo = await createRepo(forge, ownerToken, { org: org.name });
    expect(
      (
        await forge.request('PUT', `${repo.path}/collaborators/${collaborator.username}`, {
          token: ownerToken,
          body: { permission: 'write' },
        })
      ).status,
    ).toBe(204);
  });
  afterAll(() => forge.close());

  describe('tags', () => {
    it('creates a tag from the default branch (201 with the Tag shape) and lists it with X-Total-Count', async () => {
      const branch = await forge.request('GET', `${repo.path}/branches/main`, { token: ownerToken });
      const res = await forge.request('POST', `${repo.path}/tags`, {
        token: ownerToken,
        body: { tag_name: 'first', message: 'First tag\n' },
      });
      expect(res.status).toBe(201);
      const html = `${forge.appUrl}${org.name}/${repo.name}`;
      expect(res.body).toEqual({
        name: 'first',
        message: 'First tag',
        id: expect.stringMatching(/^[0-9a-f]{40}$/),
        commit: {
          url: `${forge.appUrl}api/v1/repos/${org.name}/${repo.name}/git/commits/${branch.body.commit.id}`,
          sha: branch.body.commit.id,
          created: expect.stringMatching(/Z$/),
        },
        zipball_url: `${html}/archive/first.zip`,
        tarball_url: `${html}/archive/first.tar.gz`,
      });
      expect(res.body.id).not.toBe(branch.body.commit.id);
      const list = await forge.request('GET', `${repo.path}/tags`);
      expect(list.status).toBe(200);
      expect(list.headers.get('x-total-count')).toBe(String(list.body.length));
      expect(list.body.map((t: { name: string }) => t.name)).toContain('first');
      expect((await forge.request('GET', `${repo.path}/tags/first`)).body).toEqual(res.body);
    });

    it('409 for an existing tag or record, 404 for an unknown target, 422 for a bad body', async () => {
      const dup = await forge.request('POST', `${repo.path}/tags`, {
        token: ownerToken,
        body: { tag_name: 'first' },
      });
      expect(dup.status).toBe(409);
      expect(dup.body.message).toBe('tag already exists [name: first]');
      const missing = await forge.request('POST', `${repo.path}/tags`, {
        token: ownerToken,
        body: { tag_name: 'second', target: 'no-such-branch' },
      });
      expect(missing.status).toBe(404);
      expect((await forge.request('GET', `${repo.path}/tags/second`)).status).toBe(404);
      const bad = await forge.request('POST', `${repo.path}/tags`, { token: ownerToken, body: {} });
      expect(bad.status).toBe(422);
      expect(bad.body.message).toBe('[TagName]: Required');
      const badName = await forge.request('POST', `${repo.path}/tags`, {
        token: ownerToken,
        body: { tag_name: 'bad..name' },
      });
      expect(badName.status).toBe(422);
      expect(
        (await forge.request('GET', `${repo.path}/tags`)).body.map((t: { name: string }) => t.name),
      ).not.toContain('bad..name');
    });

    it('deleting: 404 without a record, 409 when a release uses it, 204 for a tag-only record', async () => {
      expect((await forge.request('DELETE', `${repo.path}/tags/unknown`, { token: ownerToken })).status).toBe(
        404,
      );
      const rel = await forge.request('POST', `${repo.path}/releases`, {
        token: ownerToken,
        body: { tag_name: 'released' },
      });
      expect(rel.status).toBe(201);
      const conflict = await forge.request('DELETE', `${repo.path}/tags/released`, { token: ownerToken });
      expect(conflict.status).toBe(409);
      expect(conflict.body.message).toBe('a tag attached to a release cannot be deleted directly');
      const removed = await forge.request('DELETE', `${repo.path}/tags/first`, { token: ownerToken });
      expect(removed.status).toBe(204);
      expect((await forge.request('GET', `${repo.path}/tags/first`)).status).toBe(404);
    });

    it('tag names with slashes work in every tag route', async () => {
      const created = await forge.request('POST', `${repo.path}/tags`, {
        token: ownerToken,
        body: { tag_name: 'release/2024' },
      });
      expect(created.status).toBe(201);
      expect((await forge.request('GET', `${repo.path}/tags/release/2024`)).body.name).toBe('release/2024');
      expect(
        (await forge.request('DELETE', `${repo.path}/tags/release/2024`, { token: ownerToken })).status,
      ).toBe(204);
    });

    it('readers cannot create tags (403); anonymous callers must sign in (401)', async () => {
      const reader = await forge.createUser();
      const readerToken = await forge.createToken(reader, ['write:repository']);
      expect(
        (await forge.request('POST', `${repo.path}/tags`, { token: readerToken, body: { tag_name: 'r' } }))
          .status,
      ).toBe(403);
      expect((await forge.request('POST', `${repo.path}/tags`, { body: { tag_name: 'r' } })).status).toBe(
        401,
      );
    });
  });

  describe('tag protection endpoints', () => {
    it('validates input: 400 empty pattern, 400 empty allowlists, 403 duplicate, 422 unknown names', async () => {
      const path = `${repo.path}/tag_protections`;
      const post = (body: unknown) => forge.request('POST', path, { token: ownerToken, body });
      expect((await post({ name_pattern: ' ', whitelist_usernames: [owner.username] })).body).toMatchObject({
        message: 'name_pattern are empty',
      });
      const empty = await post({ name_pattern: 'x*' });
      expect(empty.status).toBe(400);
      expect(empty.body.message).toBe('both whitelist_usernames and whitelist_teams are empty');
      const unknownUser = await post({ name_pattern: 'x*', whitelist_usernames: ['nobody-here'] });
      expect(unknownUser.status).toBe(422);
      const unknownTeam = await post({ name_pattern: 'x*', whitelist_teams: ['no-team'] });
      expect(unknownTeam.status).toBe(422);
      const invalid = await post({ name_pattern: '/(/', whitelist_usernames: [owner.username] });
      expect(invalid.status).toBe(422);
      const created = await post({ name_pattern: 'x*', whitelist_usernames: [owner.username] });
      expect(created.status).toBe(201);
      const dup = await post({ name_pattern: 'x*', whitelist_teams: ['devs'] });
      expect(dup.status).toBe(403);
      expect(dup.body.message).toBe('Tag protection already exist');
      await forge.request('DELETE', `${path}/${created.body.id}`, { token: ownerToken });
    });

    it('creates, reads, edits and deletes a protection; ids of other repositories are 404', async () => {
      const path = `${repo.path}/tag_protections`;
      const created = await forge.request('POST', path, {
        token: ownerToken,
        body: { name_pattern: 'tmp-*', whitelist_usernames: [owner.username], whitelist_teams: ['devs'] },
      });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.any(Number),
        name_pattern: 'tmp-*',
        whitelist_usernames: [owner.username],
        whitelist_teams: ['devs'],
        created_at: expect.stringMatching(/Z$/),
        updated_at: expect.stringMatching(/Z$/),
      });
      const one = `${path}/${created.body.id}`;
      expect((await forge.request('GET', one, { token: ownerToken })).body).toEqual(created.body);
      const edited = await forge.request('PATCH', one, {
        token: ownerToken,
        body: { name_pattern: 'temp-*', whitelist_teams: null },
      });
      expect(edited.status, edited.text).toBe(200);
      expect(edited.body).toMatchObject({ name_pattern: 'temp-*', whitelist_teams: ['devs'] });
      const cleared = await forge.request('PATCH', one, { token: ownerToken, body: { whitelist_teams: [] } });
      expect(cleared.body.whitelist_teams).toEqual([]);
      const other = await createRepo(forge, ownerToken);
      expect(
        (
          await forge.request('GET', `${other.path}/tag_protections/${created.body.id}`, {
            token: ownerToken,
          })
        ).status,
      ).toBe(404);
      const list = await forge.request('GET', path, { token: ownerToken });
      expect(list.body.map((p: { id: number }) => p.id)).toContain(created.body.id);
      expect((await forge.request('DELETE', one, { token: ownerToken })).status).toBe(204);
      expect((await forge.request('GET', one, { token: ownerToken })).status).toBe(404);
    });

    it('only repository admins manage protections (403 for writers)', async () => {
      const res = await forge.request('GET', `${repo.path}/tag_protections`, {
        token: tokens.get(collaborator.username),
      });
      expect(res.status).toBe(403);
      expect(res.body.message).toBe(
        'user should be an owner or a collaborator with admin write of a repository',
      );
    });
  });

  describe('protected-tag matrix', () => {
    beforeAll(async () => {
      for (const body of [
        { name_pattern: 'v*', whitelist_usernames: [collaborator.username], whitelist_teams: ['releasers'] },
        { name_pattern: '/^rc-/', whitelist_usernames: [developer.username] },
      ]) {
        const res = await forge.request('POST', `${repo.path}/tag_protections`, { token: ownerToken, body });
        expect(res.status).toBe(201);
      }
    });

    const cases: Array<[who: string, tag: string, allowed: boolean]> = [
      ['releaser', 'v1', true], // team allowlist
      ['releaser', 'rc-1', false],
      ['releaser', 'nightly-1', true], // unprotected
      ['developer', 'v2', false],
      ['developer', 'rc-2', true], // user allowlist of the regex rule
      ['collaborator', 'v3', true], // user allowlist of the glob rule
      ['collaborator', 'rc-3', false],
      ['siteAdmin', 'v4', false], // no admin bypass
      ['siteAdmin', 'nightly-4', true],
      ['owner', 'v5', false], // owning the organisation is not an allowlist entry
    ];
    for (const [who, tag, allowed] of cases) {
      it(`${who} ${allowed ? 'may' : 'may not'} create ${tag} (tags and releases)`, async () => {
        const user = { releaser, developer, collaborator, siteAdmin, owner }[who]!;
        const token = tokens.get(user.username)!;
        const viaTags = await forge.request('POST', `${repo.path}/tags`, { token, body: { tag_name: tag } });
        expect(viaTags.status).toBe(allowed ? 201 : 422);
        if (!allowed) expect(viaTags.body.message).toBe('user not allowed to create protected tag');
        const viaRelease = await forge.request('POST', `${repo.path}/releases`, {
          token,
          body: { tag_name: `${tag}-rel` },
        });
        expect(viaRelease.status).toBe(allowed ? 201 : 422);
      });
    }

    it('deleting a protected tag needs the allowlist too (422), unprotected ones do not', async () => {
      const tokenOf = (u: TestUser) => tokens.get(u.username)!;
      expect(
        (
          await forge.request('POST', `${repo.path}/tags`, {
            token: tokenOf(collaborator),
            body: { tag_name: 'v9' },
          })
        ).status,
      ).toBe(201);
      const denied = await forge.request('DELETE', `${repo.path}/tags/v9`, { token: tokenOf(developer) });
      expect(denied.status).toBe(422);
      expect(denied.body.message).toBe('user not allowed to delete protected tag');
      expect(
        (await forge.request('DELETE', `${repo.path}/tags/v9`, { token: tokenOf(releaser) })).status,
      ).toBe(204);
    });
  });
});
