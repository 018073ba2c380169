import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repositoryPath } from '../src/git/repository.js';
import { startTestForge, type TestForge, type TestUser, uniqueName } from './harness.js';
import { createRepo } from './repo-fixtures.js';

/** Repositories, branches, collaborators and Gitea's permission model (reference §8.4–8.5). */
describe('repositories', () => {
  let forge: TestForge;
  let owner: TestUser;
  let ownerToken: string;
  let stranger: TestUser;
  let strangerToken: string;

  const gitDir = (ownerName: string, repo: string) =>
    repositoryPath(join(forge.ctx.config.dataDir, 'repositories'), ownerName, repo);

  beforeAll(async () => {
    forge = await startTestForge();
    owner = await forge.createUser();
    stranger = await forge.createUser();
    ownerToken = await forge.createToken(owner, ['write:repository', 'write:user', 'write:organization']);
    strangerToken = await forge.createToken(stranger, [
      'write:repository',
      'write:user',
      'write:organization',
    ]);
  });
  afterAll(() => forge.close());

  describe('create', () => {
    it('POST /user/repos with auto_init: 201, a real initial commit, the Repository shape', async () => {
      const name = uniqueName('Demo');
      const res = await forge.request('POST', '/user/repos', {
        token: ownerToken,
        body: { name, description: 'A demo', auto_init: true },
      });
      expect(res.status).toBe(201);
      const html = `${forge.appUrl}${owner.username}/${name}`;
      expect(res.body).toMatchObject({
        name,
        full_name: `${owner.username}/${name}`,
        description: 'A demo',
        empty: false,
        private: false,
        default_branch: 'main',
        html_url: html,
        clone_url: `${html}.git`,
        url: `${forge.appUrl}api/v1/repos/${owner.username}/${name}`,
        permissions: { admin: true, push: true, pull: true },
        release_counter: 0,
        owner: { id: owner.id, login: owner.username },
      });
      expect(existsSync(gitDir(owner.username, name))).toBe(true);
      const branches = await forge.request('GET', `/repos/${owner.username}/${name}/branches`);
      expect(branches.status).toBe(200);
      expect(branches.headers.get('x-total-count')).toBe('1');
      expect(branches.body).toHaveLength(1);
      expect(branches.body[0]).toMatchObject({
        name: 'main',
        commit: { message: 'Initial commit\n', author: { name: owner.username, email: owner.email } },
        protected: false,
        user_can_push: false,
      });
    });

    it('without auto_init the repository is empty: no branches, unknown branch 404', async () => {
      const repo = await createRepo(forge, ownerToken, { autoInit: false });
      expect((await forge.request('GET', repo.path)).body.empty).toBe(true);
      const branches = await forge.request('GET', `${repo.path}/branches`);
      expect(branches.body).toEqual([]);
      expect((await forge.request('GET', `${repo.path}/branches/main`)).status).toBe(404);
    });

    it('honours default_branch for the initial commit', async () => {
      const repo = await createRepo(forge, ownerToken, { defaultBranch: 'develop' });
      expect(repo.default_branch).toBe('develop');
      const branches = await forge.request('GET', `${repo.path}/branches`);
      expect(branches.body.map((b: { name: string }) => b.name)).toEqual(['develop']);
    });

    it('409 for a name taken (case-insensitively), 422 for reserved or invalid names, 400 unknown readme', async () => {
      const repo = await createRepo(forge, ownerToken);
      const post = (body: unknown) => forge.request('POST', '/user/repos', { token: ownerToken, body });
      const dup = await post({ name: repo.name.toUpperCase() });
      expect(dup.status).toBe(409);
      expect(dup.body.message).toBe('The repository with the same name already exists.');
      expect((await post({ name: '..' })).status).toBe(422);
      expect((await post({ name: 'x.git' })).body.message).toBe(
        'name pattern is not allowed [pattern: *.git]',
      );
      expect((await post({ name: 'white space' })).status).toBe(422);
      expect((await post({})).body.message).toBe('[Name]: Required');
      expect((await post({ name: uniqueName('r'), default_branch: 'bad..branch' })).status).toBe(422);
      expect((await post({ name: uniqueName('r'), auto_init: true, readme: 'Fancy' })).status).toBe(400);
    });

    it('POST /user/repos needs both the user and repository write scopes', async () => {
      const repoOnly = await forge.createToken(owner, ['write:repository']);
      const res = await forge.request('POST', '/user/repos', {
        token: repoOnly,
        body: { name: uniqueName('r') },
      });
      expect(res.status).toBe(403);
      expect((await forge.request('POST', '/user/repos', { body: { name: 'x' } })).status).toBe(401);
    });

    it('POST /orgs/{org}/repos: owners may, plain members 403, invisible orgs 404', async () => {
      const org = await forge.createOrg(ownerToken, {});
      const created = await createRepo(forge, ownerToken, { org: org.name });
      expect(created.owner).toBe(org.name);
      const member = await forge.createUser();
      const memberToken = await forge.createToken(member, ['write:organization', 'write:repository']);
      const team = await forge.createTeam(ownerToken, org.name, { permission: 'read' });
      await forge.addTeamMember(ownerToken, team.id, member.username);
      const denied = await forge.request('POST', `/orgs/${org.name}/repos`, {
        token: memberToken,
        body: { name: uniqueName('r') },
      });
      expect(denied.status).toBe(403);
      expect(denied.body.message).toBe('Given user is not allowed to create repository in organization.');
      const hidden = await forge.createOrg(ownerToken, { visibility: 'private' });
      const invisible = await forge.request('POST', `/orgs/${hidden.name}/repos`, {
        token: strangerToken,
        body: { name: uniqueName('r') },
      });
      expect(invisible.status).toBe(404);
    });
  });

  describe('permissions', () => {
    it('private repositories are 404 to anonymous callers and strangers, readable by collaborators', async () => {
      const repo = await createRepo(forge, ownerToken, { private: true });
      expect((await forge.request('GET', repo.path)).status).toBe(404);
      expect((await forge.request('GET', repo.path, { token: strangerToken })).status).toBe(404);
      const expectations: Array<[string, { admin: boolean; push: boolean; pull: boolean }]> = [
        ['read', { admin: false, push: false, pull: true }],
        ['write', { admin: false, push: true, pull: true }],
        ['admin', { admin: true, push: true, pull: true }],
      ];
      for (const [permission, perms] of expectations) {
        const put = await forge.request('PUT', `${repo.path}/collaborators/${stranger.username}`, {
          token: ownerToken,
          body: { permission },
        });
        expect(put.status).toBe(204);
        const res = await forge.request('GET', repo.path, { token: strangerToken });
        expect(res.status).toBe(200);
        expect(res.body.permissions).toEqual(perms);
      }
      await forge.request('DELETE', `${repo.path}/collaborators/${stranger.username}`, { token: ownerToken });
      expect((await forge.request('GET', repo.path, { token: strangerToken })).status).toBe(404);
    });

    it('site administrators see and administer every repository', async () => {
      const repo = await createRepo(forge, ownerToken, { private: true });
      const res = await forge.request('GET', repo.path, { token: forge.admin.token });
      expect(res.status).toBe(200);
      expect(res.body.permissions).toEqual({ admin: true, push: true, pull: true });
    });

    it('organisation teams: unit modes decide, includes_all_repositories covers new repositories', async () => {
      const org = await forge.createOrg(ownerToken, {});
      const member = await forge.createUser();
      const memberToken = await forge.createToken(member, ['write:repository']);
      const team = await forge.request('POST', `/orgs/${org.name}/teams`, {
        token: ownerToken,
        body: {
          name: 'release-managers',
          permission: 'read',
          units_map: { 'repo.code': 'read', 'repo.releases': 'write' },
          includes_all_repositories: true,
        },
      });
      expect(team.status).toBe(201);
      await forge.addTeamMember(ownerToken, team.body.id, member.username);
      const repo = await createRepo(forge, ownerToken, { org: org.name, private: true });
      const seen = await forge.request('GET', repo.path, { token: memberToken });
      expect(seen.status).toBe(200);
      expect(seen.body.permissions).toEqual({ admin: false, push: false, pull: true });
      // Releases unit write: may publish; code unit read: may not create bare tags.
      const rel = await forge.request('POST', `${repo.path}/releases`, {
        token: memberToken,
        body: { tag_name: 'v1' },
      });
      expect(rel.status).toBe(201);
      const tag = await forge.request('POST', `${repo.path}/tags`, {
        token: memberToken,
        body: { tag_name: 't1' },
      });
      expect(tag.status).toBe(403);
      // A team without that flag and without the repository sees nothing of a private repository.
      const outsider = await forge.createUser();
      const outsiderToken = await forge.createToken(outsider, ['write:repository']);
      const other = await forge.createTeam(ownerToken, org.name, { permission: 'write' });
      await forge.addTeamMember(ownerToken, other.id, outsider.username);
      expect((await forge.request('GET', repo.path, { token: outsiderToken })).status).toBe(404);
    });

    it('a public repository of a private organisation is hidden from non-members', async () => {
      const org = await forge.createOrg(ownerToken, { visibility: 'private' });
      const repo = await createRepo(forge, ownerToken, { org: org.name });
      expect((await forge.request('GET', repo.path)).status).toBe(404);
      expect((await forge.request('GET', repo.path, { token: strangerToken })).status).toBe(404);
      expect((await forge.request('GET', repo.path, { token: ownerToken })).status).toBe(200);
    });
  });

  describe('edit and delete', () => {
    it('PATCH renames (moving the git directory), edits and ignores unknown default branches', async () => {
      const repo = await createRepo(forge, ownerToken);
      const newName = uniqueName('renamed');
      const res = await forge.request('PATCH', repo.path, {
        token: ownerToken,
        body: { name: newName, description: 'new words', private: true, default_branch: 'nope' },
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        name: newName,
        description: 'new words',
        private: true,
        default_branch: 'main',
      });
      expect((await forge.request('GET', repo.path, { token: ownerToken })).status).toBe(404);
      expect(existsSync(gitDir(owner.username, newName))).toBe(true);
      expect(existsSync(gitDir(owner.username, repo.name))).toBe(false);
      const branches = await forge.request('GET', `/repos/${owner.username}/${newName}/branches`, {
        token: ownerToken,
      });
      expect(branches.body.map((b: { name: string }) => b.name)).toEqual(['main']);
    });

    it('PATCH needs repository admin (403 for writers); a taken name is 422', async () => {
      const repo = await createRepo(forge, ownerToken);
      const other = await createRepo(forge, ownerToken);
      await forge.request('PUT', `${repo.path}/collaborators/${stranger.username}`, {
        token: ownerToken,
        body: { permission: 'write' },
      });
      expect(
        (await forge.request('PATCH', repo.path, { token: strangerToken, body: { description: 'x' } }))
          .status,
      ).toBe(403);
      const taken = await forge.request('PATCH', repo.path, {
        token: ownerToken,
        body: { name: other.name },
      });
      expect(taken.status).toBe(422);
    });

    it('DELETE removes rows and files (204), then 404; admin collaborators may not delete', async () => {
      const repo = await createRepo(forge, ownerToken);
      await forge.request('POST', `${repo.path}/releases`, { token: ownerToken, body: { tag_name: 'v1' } });
      await forge.request('PUT', `${repo.path}/collaborators/${stranger.username}`, {
        token: ownerToken,
        body: { permission: 'admin' },
      });
      expect((await forge.request('DELETE', repo.path, { token: strangerToken })).status).toBe(403);
      expect((await forge.request('DELETE', repo.path, { token: ownerToken })).status).toBe(204);
      expect((await forge.request('GET', repo.path, { token: ownerToken })).status).toBe(404);
      expect(existsSync(gitDir(owner.username, repo.name))).toBe(false);
      // The name is free again.
      expect((await createRepo(forge, ownerToken, { name: repo.name })).name).toBe(repo.name);
    });
  });

  describe('collaborators', () => {
    it('PUT/GET/DELETE and the list, with Gitea status codes', async () => {
      const repo = await createRepo(forge, ownerToken);
      const path = `${repo.path}/collaborators/${stranger.username}`;
      expect((await forge.request('GET', path, { token: ownerToken })).status).toBe(404);
      expect((await forge.request('PUT', path, { token: ownerToken })).status).toBe(204);
      expect((await forge.request('GET', path, { token: ownerToken })).status).toBe(204);
      const list = await forge.request('GET', `${repo.path}/collaborators`, { token: ownerToken });
      expect(list.body.map((u: { login: string }) => u.login)).toEqual([stranger.username]);
      expect(list.headers.get('x-total-count')).toBe('1');
      const unknown = await forge.request('PUT', `${repo.path}/collaborators/nobody-at-all`, {
        token: ownerToken,
      });
      expect(unknown.status).toBe(422);
      const badMode = await forge.request('PUT', path, { token: ownerToken, body: { permission: 'owner' } });
      expect(badMode.status).toBe(422);
      expect((await forge.request('DELETE', path, { token: ownerToken })).status).toBe(204);
      expect((await forge.request('GET', path, { token: ownerToken })).status).toBe(404);
      expect((await forge.request('PUT', path, { token: strangerToken })).status).toBe(403);
    });
  });
});
