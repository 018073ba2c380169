import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestForge, type TestForge, type TestUser, uniqueName } from './harness.js';

const ALL_UNITS = [
  'repo.code',
  'repo.issues',
  'repo.pulls',
  'repo.releases',
  'repo.wiki',
  'repo.ext_wiki',
  'repo.ext_issues',
  'repo.projects',
  'repo.packages',
  'repo.actions',
];

describe('organizations and teams', () => {
  let forge: TestForge;
  let owner: TestUser;
  let ownerToken: string;
  let member: TestUser;
  let memberToken: string;
  let outsider: TestUser;
  let outsiderToken: string;
  const swagger = () => `${forge.appUrl}api/swagger`;

  beforeAll(async () => {
    forge = await startTestForge();
    owner = await forge.createUser();
    ownerToken = await forge.createToken(owner, ['write:organization', 'read:user']);
    member = await forge.createUser();
    memberToken = await forge.createToken(member, ['write:organization']);
    outsider = await forge.createUser();
    outsiderToken = await forge.createToken(outsider, ['write:organization']);
  });
  afterAll(() => forge.close());

  it('POST /orgs creates an organization (201, Gitea shape) owned by the caller', async () => {
    const name = uniqueName('Org');
    const res = await forge.request('POST', '/orgs', {
      token: ownerToken,
      body: {
        username: name,
        full_name: 'The Org',
        email: 'org@example.com',
        description: 'd',
        website: 'https://example.com',
        location: 'here',
        repo_admin_change_team_access: true,
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      name,
      full_name: 'The Org',
      email: 'org@example.com',
      avatar_url: expect.stringMatching(/^http/),
      description: 'd',
      website: 'https://example.com',
      location: 'here',
      visibility: 'public',
      repo_admin_change_team_access: true,
      username: name,
    });
    const teams = await forge.request('GET', `/orgs/${name}/teams`, { token: ownerToken });
    expect(teams.status).toBe(200);
    expect(teams.body).toHaveLength(1);
    expect(teams.body[0]).toMatchObject({
      name: 'Owners',
      permission: 'owner',
      includes_all_repositories: true,
      can_create_org_repo: true,
      organization: null,
    });
    expect([...teams.body[0].units].sort()).toEqual([...ALL_UNITS].sort());
  });

  it('POST /orgs rejects taken, reserved and malformed names with 422 and missing names naming the field', async () => {
    const name = uniqueName('org');
    await forge.createOrg(ownerToken, { username: name });
    const taken = await forge.request('POST', '/orgs', { token: ownerToken, body: { username: name } });
    expect(taken.status).toBe(422);
    expect(taken.body).toEqual({ message: `user already exists [name: ${name}]`, url: swagger() });
    const reserved = await forge.request('POST', '/orgs', { token: ownerToken, body: { username: 'api' } });
    expect(reserved.body.message).toBe('name is reserved [name: api]');
    const pattern = await forge.request('POST', '/orgs', { token: ownerToken, body: { username: 'x.keys' } });
    expect(pattern.body.message).toBe('name pattern is not allowed [pattern: *.keys]');
    const chars = await forge.request('POST', '/orgs', { token: ownerToken, body: { username: 'a b' } });
    expect(chars.status).toBe(422);
    const missing = await forge.request('POST', '/orgs', { token: ownerToken, body: {} });
    expect(missing.status).toBe(422);
    expect(missing.body).toEqual({ message: '[Username]: Required', url: swagger() });
    const anonymous = await forge.request('POST', '/orgs', { body: { username: uniqueName('org') } });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.message).toBe('token is required');
  });

  it('GET /orgs/{org}: anonymous callers get no e-mail; private organizations are 404 to outsiders', async () => {
    const pub = await forge.createOrg(ownerToken, { email: 'pub@example.com' });
    const anon = await forge.request('GET', `/orgs/${pub.name}`);
    expect(anon.status).toBe(200);
    expect(anon.body.email).toBe('');
    expect((await forge.request('GET', `/orgs/${pub.name}`, { token: outsiderToken })).body.email).toBe(
      'pub@example.com',
    );
    const priv = await forge.createOrg(ownerToken, { visibility: 'private' });
    const hidden = await forge.request('GET', `/orgs/${priv.name}`, { token: outsiderToken });
    const absent = await forge.request('GET', '/orgs/no-such-org-here', { token: outsiderToken });
    expect(hidden.status).toBe(404);
    expect(absent.status).toBe(404);
    expect(absent.body).toEqual({
      errors: ['user redirect does not exist [name: no-such-org-here]'],
      message: 'GetOrgByName',
      url: swagger(),
    });
    expect((await forge.request('GET', `/orgs/${priv.name}`, { token: ownerToken })).status).toBe(200);
    const publicOnly = await forge.createToken(owner, ['read:organization', 'public-only']);
    const limitedToken = await forge.request('GET', `/orgs/${priv.name}`, { token: publicOnly });
    expect(limitedToken.status).toBe(403);
    expect(limitedToken.body).toEqual({ message: 'token scope is limited to public orgs', url: swagger() });
  });

  it('PATCH /orgs/{org} changes repo_admin_change_team_access for owners only', async () => {
    const org = await forge.createOrg(ownerToken, {});
    const denied = await forge.request('PATCH', `/orgs/${org.name}`, {
      token: outsiderToken,
      body: { repo_admin_change_team_access: true },
    });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ message: 'Must be an organization owner', url: swagger() });
    const res = await forge.request('PATCH', `/orgs/${org.name}`, {
      token: ownerToken,
      body: { repo_admin_change_team_access: true, description: 'new', visibility: 'limited' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      repo_admin_change_team_access: true,
      description: 'new',
      visibility: 'limited',
    });
    expect(
      (await forge.request('GET', `/orgs/${org.name}`, { token: ownerToken })).body
        .repo_admin_change_team_access,
    ).toBe(true);
    const back = await forge.request('PATCH', `/orgs/${org.name}`, {
      token: ownerToken,
      body: { repo_admin_change_team_access: false },
    });
    expect(back.body.repo_admin_change_team_access).toBe(false);
    expect(back.body.description).toBe('new');
  });

  it('GET /orgs lists what the caller may see, with list headers', async () => {
    const pub = await forge.createOrg(ownerToken, {});
    const lim = await forge.createOrg(ownerToken, { visibility: 'limited' });
    const priv = await forge.createOrg(ownerToken, { visibility: 'private' });
    const names = async (auth: { token?: string }) =>
      ((await forge.request('GET', '/orgs?limit=50', auth)).body as Array<{ name: string }>).map(
        (o) => o.name,
      );
    const anon = await names({});
    expect(anon).toContain(pub.name);
    expect(anon).not.toContain(lim.name);
    const signed = await names({ token: outsiderToken });
    expect(signed).toContain(lim.name);
    expect(signed).not.toContain(priv.name);
    expect(await names({ token: forge.admin.token })).toContain(priv.name);
    const paged = await forge.request('GET', '/orgs?limit=1', { token: forge.admin.token });
    expect(paged.body).toHaveLength(1);
    expect(Number(paged.headers.get('x-total-count'))).toBeGreaterThanOrEqual(3);
    expect(paged.headers.get('link')).toContain('rel="next"');
  });

  describe('teams', () => {
    let org: { id: number; name: string };
    let team: { id: number; name: string };
    beforeAll(async () => {
      org = await forge.createOrg(ownerToken, {});
      team = await forge.createTeam(ownerToken, org.name, {
        name: 'Writers',
        permission: 'write',
        units: ['repo.code', 'repo.releases'],
      });
      await forge.addTeamMember(ownerToken, team.id, member.username);
    });

    it('POST /orgs/{org}/teams returns the team with its organization; units_map sets the mode', async () => {
      const res = await forge.request('POST', `/orgs/${org.name}/teams`, {
        token: ownerToken,
        body: {
          name: 'Readers',
          description: 'r',
          units_map: { 'repo.code': 'read', 'repo.issues': 'write' },
        },
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(Number),
        name: 'Readers',
        description: 'r',
        organization: expect.objectContaining({ id: org.id, name: org.name }),
        includes_all_repositories: false,
        permission: 'read',
        units: ['repo.code', 'repo.issues'],
        units_map: { 'repo.code': 'read', 'repo.issues': 'write' },
        can_create_org_repo: false,
      });
      const duplicate = await forge.request('POST', `/orgs/${org.name}/teams`, {
        token: ownerToken,
        body: { name: 'readers', permission: 'read', units: ['repo.code'] },
      });
      expect(duplicate.status).toBe(422);
      expect(duplicate.body.message).toBe(`team already exists [org_id: ${org.id}, name: readers]`);
      const admin = await forge.request('POST', `/orgs/${org.name}/teams`, {
        token: ownerToken,
        body: { name: 'Admins', permission: 'admin' },
      });
      expect(admin.body.permission).toBe('admin');
      expect(admin.body.units).toEqual(ALL_UNITS);
    });

    it('only owners create teams; members list them; outsiders get 403', async () => {
      const asMember = await forge.request('POST', `/orgs/${org.name}/teams`, {
        token: memberToken,
        body: { name: 'Sneaky', permission: 'read', units: ['repo.code'] },
      });
      expect(asMember.status).toBe(403);
      expect(asMember.body.message).toBe('Must be an organization owner');
      const list = await forge.request('GET', `/orgs/${org.name}/teams`, { token: memberToken });
      expect(list.status).toBe(200);
      expect(list.body.map((t: { name: string }) => t.name)).toContain('Writers');
      const outside = await forge.request('GET', `/orgs/${org.name}/teams`, { token: outsiderToken });
      expect(outside.status).toBe(403);
      expect(outside.body).toEqual({ message: 'Must be an organization member', url: swagger() });
    });

    it('GET /teams/{id} for members; 403 for other org members, 404 for outsiders and unknown ids', async () => {
      const res = await forge.request('GET', `/teams/${team.id}`, { token: memberToken });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: team.id,
        name: 'Writers',
        permission: 'write',
        units: ['repo.code', 'repo.releases'],
        units_map: { 'repo.code': 'write', 'repo.releases': 'write' },
        organization: { name: org.name },
      });
      const other = await forge.createTeam(ownerToken, org.name, { name: 'Others' });
      const notInTeam = await forge.request('GET', `/teams/${other.id}`, { token: memberToken });
      expect(notInTeam.status).toBe(403);
      expect(notInTeam.body.message).toBe('Must be a team member');
      expect((await forge.request('GET', `/teams/${team.id}`, { token: outsiderToken })).status).toBe(404);
      expect((await forge.request('GET', '/teams/999999', { token: ownerToken })).status).toBe(404);
    });

    it('PUT/DELETE /teams/{id}/members/{username}: owners only, 204, unknown user 404', async () => {
      const newcomer = await forge.createUser();
      const put = await forge.request('PUT', `/teams/${team.id}/members/${newcomer.username}`, {
        token: ownerToken,
      });
      expect(put.status).toBe(204);
      expect(put.text).toBe('');
      const newcomerToken = await forge.createToken(newcomer, ['read:organization']);
      expect((await forge.request('GET', `/teams/${team.id}`, { token: newcomerToken })).status).toBe(200);
      const byMember = await forge.request('PUT', `/teams/${team.id}/members/${outsider.username}`, {
        token: memberToken,
      });
      expect(byMember.status).toBe(404);
      expect(
        (await forge.request('PUT', `/teams/${team.id}/members/nobody-at-all`, { token: ownerToken })).status,
      ).toBe(404);
      const del = await forge.request('DELETE', `/teams/${team.id}/members/${newcomer.username}`, {
        token: ownerToken,
      });
      expect(del.status).toBe(204);
      expect((await forge.request('GET', `/teams/${team.id}`, { token: newcomerToken })).status).toBe(404);
    });
  });
});
