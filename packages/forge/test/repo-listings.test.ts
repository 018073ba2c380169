/**
 * Repository listings over HTTP: GET /repos/search (every Gitea parameter), /user/repos, /users/{u}/repos
 * and /orgs/{org}/repos, each against the visibility matrix of private repositories, limited and private
 * owners, restricted users and public-only tokens.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestForge, type TestForge, type TestUser, uniqueName } from './harness.js';
import { createRepo } from './repo-fixtures.js';

let forge: TestForge;
const p = uniqueName('rl');
const names = (body: Array<{ full_name: string }>) => body.map((repo) => repo.full_name);
const tokens: Record<string, string> = {};
const users: Record<string, TestUser> = {};
const orgs: Record<string, string> = {};
const repos: Record<string, string> = {};

beforeAll(async () => {
  forge = await startTestForge();
  // Accounts: a plain owner, owners that are limited / private, a restricted user, a collaborator, a
  // member of a private organization and an unrelated signed-in viewer.
  for (const [key, options] of [
    ['owner', {}],
    ['limited', { visibility: 'limited' as const }],
    ['hidden', { visibility: 'private' as const }],
    ['restricted', { restricted: true }],
    ['collab', {}],
    ['member', {}],
    ['viewer', {}],
  ] as const) {
    users[key] = await forge.createUser({ username: `${p}${key}`, ...options });
    tokens[key] = await forge.createToken(users[key]!, ['all']);
  }
  tokens.admin = forge.admin.token;
  tokens.adminPublicOnly = await forge.createToken(
    { username: forge.admin.username, password: forge.admin.password },
    ['all', 'public-only'],
  );
  tokens.noRepoScope = await forge.createToken(users.viewer!, ['read:user', 'read:organization']);
  for (const visibility of ['public', 'limited', 'private'] as const) {
    orgs[visibility] = (
      await forge.createOrg(tokens.owner!, { username: `${p}org${visibility}`, visibility })
    ).name;
  }
  const team = await forge.createTeam(tokens.owner!, orgs.private!, { name: 'readers', permission: 'read' });
  await forge.addTeamMember(tokens.owner!, team.id, users.member!.username);

  const make = async (key: string, token: string, options: { org?: string; private?: boolean }) => {
    const repo = await createRepo(forge, token, { name: `${p}-${key}`, autoInit: false, ...options });
    repos[key] = `${repo.owner}/${repo.name}`;
  };
  await make('pub', tokens.owner!, {});
  await make('priv', tokens.owner!, { private: true });
  await make('arch', tokens.owner!, {});
  await make('limpub', tokens.limited!, {});
  await make('hidpub', tokens.hidden!, {});
  await make('orgpub', tokens.owner!, { org: orgs.public });
  await make('orgpriv', tokens.owner!, { org: orgs.public, private: true });
  await make('limorgpub', tokens.owner!, { org: orgs.limited });
  await make('privorgpub', tokens.owner!, { org: orgs.private });
  expect(
    (await forge.request('PATCH', `/repos/${repos.arch}`, { token: tokens.owner, body: { archived: true } }))
      .status,
  ).toBe(200);
  expect(
    (
      await forge.request('PATCH', `/repos/${repos.arch}`, {
        token: tokens.owner,
        body: { description: 'Has 100%_OFF inside' },
      })
    ).status,
  ).toBe(200);
  for (const [repo, user] of [
    [repos.priv, users.collab],
    [repos.orgpriv, users.restricted],
  ] as const) {
    const res = await forge.request('PUT', `/repos/${repo}/collaborators/${user!.username}`, {
      token: tokens.owner,
      body: { permission: 'read' },
    });
    expect(res.status).toBe(204);
  }
});

afterAll(async () => {
  await forge?.close();
});

const search = (query: string, token?: string) =>
  forge.request('GET', `/repos/search?q=${p}&limit=50${query}`, token ? { token } : {});

describe('GET /repos/search: visibility matrix', () => {
  const expected = () => {
    const anon = [repos.arch, repos.orgpub, repos.pub];
    return {
      anon,
      viewer: [...anon, repos.limorgpub, repos.limpub],
      collab: [...anon, repos.limorgpub, repos.limpub, repos.priv],
      member: [...anon, repos.limorgpub, repos.limpub, repos.privorgpub],
      restricted: [repos.orgpriv],
      hidden: [...anon, repos.hidpub, repos.limorgpub, repos.limpub],
      admin: Object.values(repos),
      adminPublicOnly: anon,
    };
  };

  for (const who of [
    'anon',
    'viewer',
    'collab',
    'member',
    'restricted',
    'hidden',
    'admin',
    'adminPublicOnly',
  ]) {
    it(`${who} sees exactly the repositories GET /repos/{owner}/{repo} shows them`, async () => {
      const token = who === 'anon' ? undefined : tokens[who];
      const res = await search('&sort=id', token);
      expect(res.status).toBe(200);
      expect(res.body.ok).toBe(true);
      const want = (expected() as Record<string, string[]>)[who]!;
      expect(new Set(names(res.body.data))).toEqual(new Set(want));
      expect(res.headers.get('x-total-count')).toBe(String(want.length));
      // Each listed repository is readable by the same caller, and each hidden one is 404.
      for (const full of Object.values(repos)) {
        const one = await forge.request('GET', `/repos/${full}`, token ? { token } : {});
        if (want.includes(full)) expect(one.status).toBe(200);
        else if (who !== 'adminPublicOnly') expect(one.status).toBe(404);
        // Public-only tokens get 403 for a private repository. Gitea 1.25 lets them read a public repository
        // of a non-public owner by name but never lists it (its search reads public-only as private=false).
        else if (full === repos.priv || full === repos.orgpriv) expect(one.status).toBe(403);
      }
    });
  }

  it('private=false keeps only public repositories of public owners, even for those who see more', async () => {
    const res = await search('&private=false', tokens.collab);
    expect(new Set(names(res.body.data))).toEqual(new Set([repos.arch, repos.orgpub, repos.pub]));
  });

  it("items are Gitea's Repository with the caller's permissions", async () => {
    const res = await forge.request('GET', `/repos/search?q=${p}-priv`, { token: tokens.collab });
    const item = res.body.data.find((repo: { full_name: string }) => repo.full_name === repos.priv);
    expect(item).toMatchObject({
      name: `${p}-priv`,
      full_name: repos.priv,
      private: true,
      owner: { login: users.owner!.username },
      permissions: { admin: false, push: false, pull: true },
      html_url: `${forge.appUrl}${repos.priv}`,
      url: `${forge.appUrl}api/v1/repos/${repos.priv}`,
    });
  });

  it('needs read:repository from a scoped token', async () => {
    const res = await forge.request('GET', '/repos/search', { token: tokens.noRepoScope });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe(
      'token does not have at least one of required scope(s), required=[read:repository], token scope=read:organization,read:user',
    );
  });
});

describe('GET /repos/search: parameters as Gitea reads them', () => {
  const found = async (query: string, token = tokens.admin) => {
    const res = await forge.request('GET', `/repos/search?limit=50${query}`, { token });
    expect(res.status).toBe(200);
    return names(res.body.data);
  };

  it('q matches repository names as a substring, case-insensitively; commas separate keywords', async () => {
    expect(await found(`&q=${p.toUpperCase()}-ORGPUB`)).toEqual([repos.orgpub]);
    expect(new Set(await found(`&q=${p}-orgpub,${p}-limpub`))).toEqual(new Set([repos.orgpub, repos.limpub]));
  });

  it('q is never query syntax: % and _ match themselves', async () => {
    expect(await found('&q=%25')).toEqual([]);
    expect(await found('&q=_')).toEqual([]);
    expect(await found(`&q=${p}%25pub`)).toEqual([]);
  });

  it('includeDesc searches descriptions too (literally)', async () => {
    expect(await found('&q=100%25_off')).toEqual([]);
    expect(await found('&q=100%25_off&includeDesc=true')).toEqual([repos.arch]);
    expect(await found('&q=100%25xoff&includeDesc=true')).toEqual([]);
  });

  it('owner/name keywords match owner and name', async () => {
    expect(await found(`&q=${orgs.public}/${p}-org`)).toEqual([repos.orgpriv, repos.orgpub].sort());
  });

  it('topic=true matches nothing (the forge has no topics)', async () => {
    expect(await found(`&q=${p}&topic=true`)).toEqual([]);
  });

  it('uid: owned plus collaborations; exclusive: owned only; mode=collaborative: collaborations only', async () => {
    const collab = users.collab!.id;
    await createRepo(forge, tokens.collab!, { name: `${p}-own`, autoInit: false });
    expect(await found(`&q=${p}&uid=${collab}`, tokens.collab)).toEqual(
      [repos.priv, `${users.collab!.username}/${p}-own`].sort(),
    );
    expect(await found(`&q=${p}&uid=${collab}&exclusive=true`, tokens.collab)).toEqual([
      `${users.collab!.username}/${p}-own`,
    ]);
    expect(await found(`&q=${p}&uid=${collab}&mode=collaborative`, tokens.collab)).toEqual([repos.priv]);
    // What another caller may see of the same user's collaborations is limited to their own view.
    expect(await found(`&q=${p}&uid=${collab}`, tokens.viewer)).toEqual([
      `${users.collab!.username}/${p}-own`,
    ]);
    await forge.request('DELETE', `/repos/${users.collab!.username}/${p}-own`, { token: tokens.collab });
  });

  it('uid of an organization member reaches public repositories of the private organization', async () => {
    expect(await found(`&q=${p}&uid=${users.member!.id}`, tokens.member)).toEqual([repos.privorgpub]);
  });

  it('team_id restricts to the repositories of a team', async () => {
    const team = await forge.createTeam(tokens.owner!, orgs.public!, { name: 'pubteam', permission: 'read' });
    expect(await found(`&q=${p}&team_id=${team.id}`)).toEqual([]);
    const put = await forge.request('PUT', `/repos/${repos.orgpub}/teams/pubteam`, { token: tokens.owner });
    expect(put.status).toBe(204);
    expect(await found(`&q=${p}&team_id=${team.id}`)).toEqual([repos.orgpub]);
  });

  it('is_private and archived filter both ways; template=true, mode=fork and mode=mirror find nothing', async () => {
    const all = await found(`&q=${p}`);
    expect(await found(`&q=${p}&is_private=true`)).toEqual([repos.orgpriv, repos.priv].sort());
    expect((await found(`&q=${p}&is_private=false`)).length).toBe(all.length - 2);
    expect(await found(`&q=${p}&archived=true`)).toEqual([repos.arch]);
    expect((await found(`&q=${p}&archived=false`)).length).toBe(all.length - 1);
    expect(await found(`&q=${p}&template=true`)).toEqual([]);
    expect((await found(`&q=${p}&template=false`)).length).toBe(all.length);
    expect(await found(`&q=${p}&mode=fork`)).toEqual([]);
    expect(await found(`&q=${p}&mode=mirror`)).toEqual([]);
    expect((await found(`&q=${p}&mode=source`)).length).toBe(all.length);
    expect(await found(`&q=${p}&starredBy=${users.viewer!.id}`)).toEqual([]);
  });

  it('sorts: name by default, alpha = owner then name, id and created both ways', async () => {
    const byName = await found(`&q=${p}`);
    const repoName = (full: string) => full.split('/')[1]!;
    expect(byName.map(repoName)).toEqual([...byName.map(repoName)].sort());
    const alpha = await found(`&q=${p}&sort=alpha&order=desc`);
    expect(alpha).toEqual(
      [...alpha].sort((a, b) => {
        const [ao, an] = a.split('/');
        const [bo, bn] = b.split('/');
        return ao === bo ? (an! < bn! ? 1 : -1) : ao! < bo! ? 1 : -1;
      }),
    );
    const ids = (
      await forge.request('GET', `/repos/search?q=${p}&limit=50&sort=id&order=desc`, { token: tokens.admin })
    ).body.data.map((repo: { id: number }) => repo.id);
    expect(ids).toEqual([...ids].sort((a: number, b: number) => b - a));
    expect(await found(`&q=${p}&sort=created`)).toEqual(await found(`&q=${p}&sort=id`));
  });

  it('priority_owner_id puts that owner first', async () => {
    const org = (await forge.request('GET', `/orgs/${orgs.private}`, { token: tokens.admin })).body;
    const list = await found(`&q=${p}&priority_owner_id=${org.id}`);
    expect(list[0]).toBe(repos.privorgpub);
  });

  it('unknown mode, sort or order: 422 in the error format, nothing listed', async () => {
    for (const [query, message] of [
      ['mode=all', 'Invalid search mode: "all"'],
      ['sort=name', 'Invalid sort mode: "name"'],
      ['sort=id&order=up', 'Invalid sort order: "up"'],
    ]) {
      const res = await forge.request('GET', `/repos/search?${query}`);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ message, url: `${forge.appUrl}api/swagger` });
    }
  });

  it('integers and booleans parse strictly; what does not parse reads as Gitea reads it (0 / false)', async () => {
    expect(await found(`&q=${p}&uid=0x1`)).toEqual(await found(`&q=${p}`));
    expect(await found(`&q=${p}&archived=yes`)).toEqual(await found(`&q=${p}&archived=false`));
    expect(await found(`&q=${p}&is_private=`)).toEqual(await found(`&q=${p}`));
  });

  it('paginates with X-Total-Count and Link', async () => {
    const res = await forge.request('GET', `/repos/search?q=${p}&limit=2&page=2`, { token: tokens.admin });
    const total = Object.keys(repos).length;
    expect(res.headers.get('x-total-count')).toBe(String(total));
    expect(res.body.data).toHaveLength(2);
    const base = `${forge.appUrl}api/v1/repos/search`;
    const last = Math.ceil(total / 2);
    expect(res.headers.get('link')).toBe(
      `<${base}?limit=2&page=3&q=${p}>; rel="next",<${base}?limit=2&page=${last}&q=${p}>; rel="last",` +
        `<${base}?limit=2&page=1&q=${p}>; rel="first",<${base}?limit=2&page=1&q=${p}>; rel="prev"`,
    );
  });
});

describe('GET /user/repos', () => {
  it("lists the caller's own repositories and collaborations by name", async () => {
    const res = await forge.request('GET', '/user/repos', { token: tokens.collab });
    expect(res.status).toBe(200);
    expect(names(res.body)).toEqual([repos.priv]);
    expect(res.headers.get('x-total-count')).toBe('1');
    // The organizations' owner reaches their repositories through the Owners team.
    const owner = await forge.request('GET', '/user/repos', { token: tokens.owner });
    const own = [
      repos.arch,
      repos.priv,
      repos.pub,
      repos.orgpub,
      repos.orgpriv,
      repos.limorgpub,
      repos.privorgpub,
    ];
    const byName = (full: string | undefined) => full!.split('/')[1]!;
    expect(names(owner.body)).toEqual(own.sort((a, b) => (byName(a) < byName(b) ? -1 : 1)));
  });

  it('the restricted user sees what was given to them; anonymous callers get 401', async () => {
    expect(names((await forge.request('GET', '/user/repos', { token: tokens.restricted })).body)).toEqual([
      repos.orgpriv,
    ]);
    const anon = await forge.request('GET', '/user/repos');
    expect(anon.status).toBe(401);
  });

  it('needs read:user and read:repository', async () => {
    const res = await forge.request('GET', '/user/repos', { token: tokens.noRepoScope });
    expect(res.status).toBe(403);
  });
});

describe('GET /users/{username}/repos', () => {
  const list = (user: string, token?: string) =>
    forge.request('GET', `/users/${user}/repos`, token ? { token } : {});

  it('private repositories only for those who may read them, and only they are counted', async () => {
    const anon = await list(users.owner!.username);
    expect(names(anon.body)).toEqual([repos.pub, repos.arch]);
    expect(anon.headers.get('x-total-count')).toBe('2');
    const collab = await list(users.owner!.username, tokens.collab);
    expect(names(collab.body)).toEqual([repos.pub, repos.priv, repos.arch]);
    expect(collab.headers.get('x-total-count')).toBe('3');
    const viewer = await list(users.owner!.username, tokens.viewer);
    expect(viewer.headers.get('x-total-count')).toBe('2');
  });

  it('limited and private users are 404 to those who may not see them', async () => {
    expect((await list(users.limited!.username)).status).toBe(404);
    expect(names((await list(users.limited!.username, tokens.viewer)).body)).toEqual([repos.limpub]);
    expect((await list(users.hidden!.username, tokens.viewer)).status).toBe(404);
    expect(names((await list(users.hidden!.username, tokens.hidden)).body)).toEqual([repos.hidpub]);
    expect((await list(`${p}nobody`)).status).toBe(404);
  });

  it('public-only tokens list public repositories of public users only', async () => {
    expect(names((await list(users.owner!.username, tokens.adminPublicOnly)).body)).toEqual([
      repos.pub,
      repos.arch,
    ]);
    expect((await list(users.limited!.username, tokens.adminPublicOnly)).status).toBe(404);
  });

  it('paginates with Link', async () => {
    const res = await forge.request('GET', `/users/${users.owner!.username}/repos?limit=1`, {
      token: tokens.owner,
    });
    expect(names(res.body)).toEqual([repos.pub]);
    const base = `${forge.appUrl}api/v1/users/${users.owner!.username}/repos`;
    expect(res.headers.get('link')).toBe(
      `<${base}?limit=1&page=2>; rel="next",<${base}?limit=1&page=3>; rel="last"`,
    );
  });
});

describe('GET /orgs/{org}/repos', () => {
  const list = (org: string, token?: string) =>
    forge.request('GET', `/orgs/${org}/repos`, token ? { token } : {});

  it('public organization: private repositories for those who may read them', async () => {
    expect(names((await list(orgs.public!)).body)).toEqual([repos.orgpub]);
    expect(names((await list(orgs.public!, tokens.collab)).body)).toEqual([repos.orgpub]);
    // A restricted user outside the organization does not see the organization itself (Gitea's
    // HasOrgOrUserVisible), though search lists the repository they collaborate on.
    expect((await list(orgs.public!, tokens.restricted)).status).toBe(404);
    expect(names((await list(orgs.public!, tokens.owner)).body)).toEqual([repos.orgpub, repos.orgpriv]);
  });

  it('limited and private organizations are 404 to those outside them', async () => {
    expect((await list(orgs.limited!)).status).toBe(404);
    expect(names((await list(orgs.limited!, tokens.viewer)).body)).toEqual([repos.limorgpub]);
    expect((await list(orgs.private!, tokens.viewer)).status).toBe(404);
    expect(names((await list(orgs.private!, tokens.member)).body)).toEqual([repos.privorgpub]);
  });

  it('public-only tokens: 403 for a non-public organization', async () => {
    const res = await list(orgs.limited!, tokens.adminPublicOnly);
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('token scope is limited to public orgs');
  });
});
