import { giteaApi } from 'gitea-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestForge, type TestForge, uniqueName } from './harness.js';

/** The existing Gitea client library must work unchanged against the forge. */
describe('gitea-js client', () => {
  let forge: TestForge;
  beforeAll(async () => {
    forge = await startTestForge();
  });
  afterAll(() => forge.close());

  const basic = (username: string, password: string) => ({
    headers: { Authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` },
  });

  it('creates a user, a token over Basic auth, then reads and searches users with the token', async () => {
    const admin = giteaApi(forge.url, { token: forge.admin.token, customFetch: fetch });
    const username = uniqueName('js');
    const created = await admin.admin.adminCreateUser({
      username,
      email: `${username}@example.com`,
      password: 'js-password-1',
      must_change_password: false,
      full_name: 'Gitea JS',
    });
    expect(created.status).toBe(201);
    expect(created.data.login).toBe(username);

    const anonymous = giteaApi(forge.url, { customFetch: fetch });
    const token = await anonymous.users.userCreateToken(
      username,
      { name: 'js-token', scopes: ['write:user', 'write:organization'] },
      basic(username, 'js-password-1'),
    );
    expect(token.status).toBe(201);
    expect(token.data.scopes).toEqual(['write:organization', 'write:user']);
    expect(token.data.sha1).toMatch(/^[0-9a-f]{40}$/);

    const client = giteaApi(forge.url, { token: token.data.sha1, customFetch: fetch });
    const me = await client.user.userGetCurrent();
    expect(me.data).toMatchObject({
      login: username,
      full_name: 'Gitea JS',
      email: `${username}@example.com`,
    });
    const other = await client.users.userGet(forge.admin.username);
    expect(other.data.login).toBe(forge.admin.username);
    const found = await client.users.userSearch({ q: username, limit: 5 });
    expect(found.data.ok).toBe(true);
    expect(found.data.data?.map((u) => u.login)).toEqual([username]);
    expect(found.headers.get('x-total-count')).toBe('1');
  });

  it('non-2xx answers reach the client as Gitea error bodies', async () => {
    const client = giteaApi(forge.url, { token: forge.admin.token, customFetch: fetch });
    const failure = await client.users
      .userGet('no-such-user-js')
      .catch((error: { status: number; error: unknown }) => error);
    expect(failure).toMatchObject({ status: 404, error: { message: 'GetUserByName' } });
  });

  it('creates, reads, edits an organization and its teams', async () => {
    const owner = await forge.createUser();
    const token = await forge.createToken(owner, ['write:organization']);
    const client = giteaApi(forge.url, { token, customFetch: fetch });
    const name = uniqueName('jsorg');
    const org = await client.orgs.orgCreate({ username: name, full_name: 'JS Org', visibility: 'public' });
    expect(org.status).toBe(201);
    expect(org.data).toMatchObject({ name, full_name: 'JS Org', repo_admin_change_team_access: false });
    const edited = await client.orgs.orgEdit(name, { repo_admin_change_team_access: true });
    expect(edited.data.repo_admin_change_team_access).toBe(true);
    expect((await client.orgs.orgGet(name)).data.repo_admin_change_team_access).toBe(true);
    const team = await client.orgs.orgCreateTeam(name, {
      name: 'devs',
      permission: 'write',
      units: ['repo.code'],
    });
    expect(team.status).toBe(201);
    expect(team.data).toMatchObject({ name: 'devs', permission: 'write', units: ['repo.code'] });
    const teams = await client.orgs.orgListTeams(name);
    expect(teams.data.map((t) => t.name).sort()).toEqual(['Owners', 'devs']);
  });
});
