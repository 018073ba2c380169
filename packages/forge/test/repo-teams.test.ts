// Seed "Repository teams" rules over real HTTP (reference §7, §9.2).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestForge, type TestForge, type TestUser, uniqueName } from './harness.js';
import { createRepo, type TestRepo } from './repo-fixtures.js';

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

let forge: TestForge;
let owner: TestUser;
let ownerToken: string;
let org: { id: number; name: string };
let repo: TestRepo;
let writers: { id: number; name: string };
let readers: { id: number; name: string };
let everything: { id: number; name: string };
let repoAdmin: TestUser;
let repoAdminToken: string;
let stranger: TestUser;
let strangerToken: string;

const scopes = ['write:organization', 'write:repository', 'write:user'];
const swagger = () => `${forge.appUrl}api/swagger`;
const teamsPath = (target: TestRepo, team?: string) =>
  `${target.path}/teams${team === undefined ? '' : `/${team}`}`;

async function createTeam(orgName: string, body: Record<string, unknown>) {
  const response = await forge.request('POST', `/orgs/${orgName}/teams`, { token: ownerToken, body });
  expect(response.status, response.text).toBe(201);
  return { id: response.body.id as number, name: response.body.name as string };
}

async function makeCollaborator(target: TestRepo, user: TestUser, permission: string) {
  const response = await forge.request('PUT', `${target.path}/collaborators/${user.username}`, {
    token: ownerToken,
    body: { permission },
  });
  expect(response.status, response.text).toBe(204);
}

beforeAll(async () => {
  forge = await startTestForge();
  owner = await forge.createUser();
  ownerToken = await forge.createToken(owner, scopes);
  org = await forge.createOrg(ownerToken, {});
  repo = await createRepo(forge, ownerToken, { org: org.name, private: true });
  writers = await createTeam(org.name, {
    name: 'Writers',
    permission: 'write',
    units: ['repo.code', 'repo.releases'],
  });
  readers = await createTeam(org.name, {
    name: 'Readers',
    permission: 'read',
    units: ['repo.code', 'repo.releases'],
  });
  everything = await createTeam(org.name, {
    name: 'Everything',
    permission: 'read',
    units: ['repo.code'],
    includes_all_repositories: true,
  });
  repoAdmin = await forge.createUser();
  repoAdminToken = await forge.createToken(repoAdmin, scopes);
  await makeCollaborator(repo, repoAdmin, 'admin');
  stranger = await forge.createUser();
  strangerToken = await forge.createToken(stranger, scopes);
}, 60_000);

afterAll(() => forge?.close());

describe('listing and checking', () => {
  it('GET /teams lists the teams that have the repository, Owners first, as Team JSON with organization null', async () => {
    const response = await forge.request('GET', teamsPath(repo), { token: ownerToken });
    expect(response.status).toBe(200);
    expect(response.body.map((team: { name: string }) => team.name)).toEqual(['Owners', 'Everything']);
    const [owners, all] = response.body;
    expect({ ...owners, units: [...owners.units].sort() }).toEqual({
      id: expect.any(Number),
      name: 'Owners',
      description: '',
      organization: null,
      includes_all_repositories: true,
      permission: 'owner',
      units: [...ALL_UNITS].sort(),
      units_map: Object.fromEntries(ALL_UNITS.map((unit) => [unit, 'owner'])),
      can_create_org_repo: true,
    });
    expect(all).toEqual({
      id: everything.id,
      name: 'Everything',
      description: '',
      organization: null,
      includes_all_repositories: true,
      permission: 'read',
      units: ['repo.code'],
      units_map: { 'repo.code': 'read' },
      can_create_org_repo: false,
    });
  });

  it('GET /teams is [] (never null) when no team has the repository', async () => {
    const lonely = await forge.createOrg(ownerToken, {});
    const lonelyRepo = await createRepo(forge, ownerToken, { org: lonely.name });
    // The Owners team includes every repository (and got a link to it); without both nothing is left.
    await forge.ctx.db
      .updateTable('team')
      .set({ includes_all_repositories: 0 })
      .where('org_id', '=', lonely.id)
      .execute();
    await forge.ctx.db.deleteFrom('team_repo').where('org_id', '=', lonely.id).execute();
    const response = await forge.request('GET', teamsPath(lonelyRepo), { token: ownerToken });
    expect(response.status).toBe(200);
    expect(response.text).toBe('[]');
  });

  it('GET /teams/{team} matches the name case-insensitively and equals the list entry', async () => {
    const list = await forge.request('GET', teamsPath(repo), { token: ownerToken });
    const one = await forge.request('GET', teamsPath(repo, 'eVeRyThInG'), { token: ownerToken });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(list.body[1]);
  });

  it('GET /teams/{team}: 404 for a team the organization does not have', async () => {
    const response = await forge.request('GET', teamsPath(repo, 'NonExistingTeam'), { token: ownerToken });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({
      errors: null,
      message: `team does not exist [org_id ${org.id}, team_id 0, name: NonExistingTeam]`,
      url: swagger(),
    });
  });

  it('GET /teams/{team}: 404 for a team that exists but is not assigned', async () => {
    const response = await forge.request('GET', teamsPath(repo, 'Readers'), { token: ownerToken });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ errors: null, message: "The target couldn't be found.", url: swagger() });
  });

  it('every method needs a signed-in caller, and an invisible repository is 404', async () => {
    const publicRepo = await createRepo(forge, ownerToken, { org: org.name });
    const anonymous = await forge.request('GET', teamsPath(publicRepo));
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ message: 'token is required', url: swagger() });
    expect((await forge.request('GET', teamsPath(repo), { token: strangerToken })).status).toBe(404);
    const readOnly = await forge.createToken(owner, ['read:user']);
    const scoped = await forge.request('GET', teamsPath(repo), { token: readOnly });
    expect(scoped.status).toBe(403);
  });
});

describe('a repository owned by a user', () => {
  it('all four methods answer 405 and nothing else happens', async () => {
    const personal = await createRepo(forge, ownerToken);
    const expected = { message: 'repo is not owned by an organization', url: swagger() };
    for (const [method, path] of [
      ['GET', teamsPath(personal)],
      ['GET', teamsPath(personal, 'Writers')],
      ['PUT', teamsPath(personal, 'Writers')],
      ['DELETE', teamsPath(personal, 'Writers')],
    ] as const) {
      const response = await forge.request(method, path, { token: ownerToken });
      expect(response.status, `${method} ${path}`).toBe(405);
      expect(response.body).toEqual(expected);
    }
    const repoRow = await forge.ctx.db
      .selectFrom('repository')
      .select('id')
      .where('lower_name', '=', personal.name.toLowerCase())
      .executeTakeFirstOrThrow();
    const links = await forge.ctx.db
      .selectFrom('team_repo')
      .select('id')
      .where('repo_id', '=', repoRow.id)
      .execute();
    expect(links).toEqual([]);
  });
});

describe('assigning and removing', () => {
  it('PUT: 404 for an unknown team; DELETE: 404 for an unknown team', async () => {
    for (const method of ['PUT', 'DELETE']) {
      const response = await forge.request(method, teamsPath(repo, 'Ghosts'), { token: ownerToken });
      expect(response.status).toBe(404);
      expect(response.body.message).toBe(`team does not exist [org_id ${org.id}, team_id 0, name: Ghosts]`);
    }
  });

  it('PUT assigns (204, no body), a second PUT is 422; the name is case-insensitive', async () => {
    const first = await forge.request('PUT', teamsPath(repo, 'writers'), { token: ownerToken });
    expect(first.status).toBe(204);
    expect(first.text).toBe('');
    const check = await forge.request('GET', teamsPath(repo, 'Writers'), { token: ownerToken });
    expect(check.status).toBe(200);
    expect(check.body).toMatchObject({
      id: writers.id,
      permission: 'write',
      units: ['repo.code', 'repo.releases'],
    });
    const again = await forge.request('PUT', teamsPath(repo, 'WRITERS'), { token: ownerToken });
    expect(again.status).toBe(422);
    expect(again.body).toEqual({ message: "team 'Writers' is already added to repo", url: swagger() });
  });

  it('DELETE removes (204), a second DELETE is 422', async () => {
    const removed = await forge.request('DELETE', teamsPath(repo, 'Writers'), { token: ownerToken });
    expect(removed.status).toBe(204);
    expect((await forge.request('GET', teamsPath(repo, 'Writers'), { token: ownerToken })).status).toBe(404);
    const again = await forge.request('DELETE', teamsPath(repo, 'Writers'), { token: ownerToken });
    expect(again.status).toBe(422);
    expect(again.body).toEqual({ message: "team 'Writers' was not added to repo", url: swagger() });
  });

  it('a team including all repositories counts as assigned: PUT 422, DELETE 422', async () => {
    const put = await forge.request('PUT', teamsPath(repo, 'Everything'), { token: ownerToken });
    expect(put.status).toBe(422);
    expect(put.body.message).toBe("team 'Everything' is already added to repo");
    const del = await forge.request('DELETE', teamsPath(repo, 'Everything'), { token: ownerToken });
    expect(del.status).toBe(422);
    expect(del.body.message).toBe(
      "team 'Everything' includes all repositories and cannot be removed from one",
    );
  });

  it('parallel PUTs of one team: exactly one 204, the rest 422', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 10 }, () =>
        forge.request('PUT', teamsPath(repo, 'Readers'), { token: ownerToken }),
      ),
    );
    expect(statuses.map((response) => response.status).sort()).toEqual([204, ...Array(9).fill(422)]);
    expect((await forge.request('DELETE', teamsPath(repo, 'Readers'), { token: ownerToken })).status).toBe(
      204,
    );
  });
});

describe('who may change team access (rule 3)', () => {
  it('setting off: a repository admin who is not an owner gets 403, the org owner may', async () => {
    const denied = await forge.request('PUT', teamsPath(repo, 'Readers'), { token: repoAdminToken });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ message: 'user is nor repo admin nor owner', url: swagger() });
    expect(
      (await forge.request('DELETE', teamsPath(repo, 'Readers'), { token: repoAdminToken })).status,
    ).toBe(403);
    expect((await forge.request('PUT', teamsPath(repo, 'Readers'), { token: ownerToken })).status).toBe(204);
    expect((await forge.request('DELETE', teamsPath(repo, 'Readers'), { token: ownerToken })).status).toBe(
      204,
    );
  });

  it('setting on: a repository admin may assign and remove teams', async () => {
    const open = await forge.createOrg(ownerToken, { repo_admin_change_team_access: true });
    const openRepo = await createRepo(forge, ownerToken, { org: open.name, private: true });
    await createTeam(open.name, { name: 'Helpers', permission: 'read', units: ['repo.code'] });
    await makeCollaborator(openRepo, repoAdmin, 'admin');
    expect(
      (await forge.request('PUT', teamsPath(openRepo, 'Helpers'), { token: repoAdminToken })).status,
    ).toBe(204);
    expect(
      (await forge.request('DELETE', teamsPath(openRepo, 'Helpers'), { token: repoAdminToken })).status,
    ).toBe(204);
  });

  it('a caller below repository admin gets 403 whatever the setting; a site admin may', async () => {
    const writer = await forge.createUser();
    const writerToken = await forge.createToken(writer, scopes);
    await makeCollaborator(repo, writer, 'write');
    const denied = await forge.request('PUT', teamsPath(repo, 'Readers'), { token: writerToken });
    expect(denied.status).toBe(403);
    expect(denied.body.message).toBe(
      'user should be an owner or a collaborator with admin write of a repository',
    );
    expect((await forge.request('GET', teamsPath(repo), { token: writerToken })).status).toBe(200);
    expect(
      (await forge.request('PUT', teamsPath(repo, 'Readers'), { token: forge.admin.token })).status,
    ).toBe(204);
    expect(
      (await forge.request('DELETE', teamsPath(repo, 'Readers'), { token: forge.admin.token })).status,
    ).toBe(204);
  });
});

describe('assignment decides what team members can do', () => {
  it('members of an assigned write team publish releases; read teams only read; removal takes it back', async () => {
    const writer = await forge.createUser();
    const writerToken = await forge.createToken(writer, ['write:repository']);
    await forge.addTeamMember(ownerToken, writers.id, writer.username);
    const reader = await forge.createUser();
    const readerToken = await forge.createToken(reader, ['write:repository']);
    await forge.addTeamMember(ownerToken, readers.id, reader.username);
    const releases = `${repo.path}/releases`;
    const publish = (token: string) =>
      forge.request('POST', releases, { token, body: { tag_name: uniqueName('v'), name: 'release' } });

    // Not assigned: the private repository is invisible to both.
    expect((await forge.request('GET', releases, { token: writerToken })).status).toBe(404);
    expect((await publish(writerToken)).status).toBe(404);
    expect((await forge.request('GET', releases, { token: readerToken })).status).toBe(404);

    expect((await forge.request('PUT', teamsPath(repo, 'Writers'), { token: ownerToken })).status).toBe(204);
    expect((await forge.request('PUT', teamsPath(repo, 'Readers'), { token: ownerToken })).status).toBe(204);
    const published = await publish(writerToken);
    expect(published.status, published.text).toBe(201);
    expect(published.body.author.login).toBe(writer.username);
    const listed = await forge.request('GET', releases, { token: readerToken });
    expect(listed.status).toBe(200);
    expect(listed.body.map((release: { id: number }) => release.id)).toContain(published.body.id);
    const readerPublish = await publish(readerToken);
    expect(readerPublish.status).toBe(403);

    expect((await forge.request('DELETE', teamsPath(repo, 'Writers'), { token: ownerToken })).status).toBe(
      204,
    );
    expect((await publish(writerToken)).status).toBe(404);
    expect((await forge.request('GET', releases, { token: readerToken })).status).toBe(200);
    expect((await forge.request('DELETE', teamsPath(repo, 'Readers'), { token: ownerToken })).status).toBe(
      204,
    );
    expect((await forge.request('GET', releases, { token: readerToken })).status).toBe(404);
  });
});
