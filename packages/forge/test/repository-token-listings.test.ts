/**
 * Repository listings read with a repository-scoped token: each shows only the token's repositories, and
 * its count headers (X-Total-Count, Link) count only those, on every page, so a scoped token learns
 * nothing of how many other repositories (private ones among them) its owner has. The same for the
 * owner's activity feed and heatmap, and for a public-only token there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestForge, type TestForge, type TestUser, uniqueName } from './harness.js';
import { createRepo, type TestRepo } from './repo-fixtures.js';

describe('repository listings with a repository-scoped token', () => {
  let forge: TestForge;
  let owner: TestUser;
  let org: string;
  let scoped: string;
  const listedMine: TestRepo[] = [];
  const listedOrg: TestRepo[] = [];

  const fullNames = (repos: TestRepo[]) => repos.map((repo) => `${repo.owner}/${repo.name}`).sort();

  beforeAll(async () => {
    forge = await startTestForge();
    owner = await forge.createUser();
    const token = await forge.createToken(owner, ['all']);
    org = (await forge.createOrg(token, { username: uniqueName('tlorg') })).name;
    const make = (options: { org?: string; private?: boolean }) =>
      createRepo(forge, token, { autoInit: false, ...options });
    // Listed: three of the owner's and three of the organization's, private and public.
    listedMine.push(await make({ private: true }), await make({ private: true }), await make({}));
    listedOrg.push(
      await make({ org, private: true }),
      await make({ org }),
      await make({ org, private: true }),
    );
    // Not listed: more private and public repositories of both, which the owner's other tokens see.
    for (let i = 0; i < 3; i++) {
      await make({ private: true });
      await make({});
      await make({ org, private: true });
    }
    const created = await forge.request('POST', `/users/${owner.username}/tokens`, {
      basic: { username: owner.username, password: owner.password },
      body: {
        name: 'listing',
        scopes: ['read:repository', 'read:user', 'read:organization'],
        repositories: [...listedMine, ...listedOrg].map((repo) => ({ owner: repo.owner, name: repo.name })),
      },
    });
    expect(created.status).toBe(201);
    scoped = created.body.sha1;
  });
  afterAll(async () => {
    await forge.close();
  });

  const cases = () => [
    { route: '/user/repos', expected: [...listedMine, ...listedOrg], search: false },
    { route: '/repos/search', expected: [...listedMine, ...listedOrg], search: true },
    { route: `/users/${owner.username}/repos`, expected: listedMine, search: false },
    { route: `/orgs/${org}/repos`, expected: listedOrg, search: false },
  ];

  it('X-Total-Count and Link count only the listed repositories, on page 1 and page 2', async () => {
    for (const { route, expected, search } of cases()) {
      const seen: string[] = [];
      const limit = expected.length - 1;
      for (const page of [1, 2]) {
        const res = await forge.request('GET', `${route}?limit=${limit}&page=${page}`, { token: scoped });
        expect(res.status, route).toBe(200);
        expect(res.headers.get('x-total-count'), `${route} page ${page}`).toBe(String(expected.length));
        const rows: Array<{ full_name: string }> = search ? res.body.data : res.body;
        // Every page is full up to the last: nothing the token cannot see takes a place on it.
        expect(rows.length, `${route} page ${page}`).toBe(page === 1 ? limit : 1);
        seen.push(...rows.map((row) => row.full_name));
        const link = res.headers.get('link') ?? '';
        const rels = [...link.matchAll(/rel="(\w+)"/g)].map((match) => match[1]);
        expect(rels, `${route} page ${page}`).toEqual(page === 1 ? ['next', 'last'] : ['first', 'prev']);
        if (page === 1) expect(link).toContain(`page=2>; rel="last"`);
      }
      expect(seen.sort(), route).toEqual(fullNames(expected));
    }
  });

  it("the owner's HTML page lists only the listed repositories", async () => {
    for (const [name, expected] of [
      [owner.username, listedMine],
      [org, listedOrg],
    ] as const) {
      const res = await forge.request('GET', `${forge.appUrl}${name}`, { token: scoped });
      expect(res.status).toBe(200);
      const linked = [...res.text.matchAll(/<li><a href="([^"]+)">/g)].map((match) => match[1]);
      expect(linked.sort()).toEqual(fullNames(expected).map((full) => `${forge.appUrl}${full}`));
    }
  });

  it("the owner's activity feed and heatmap show and count only the listed repositories' activity", async () => {
    const full = await forge.createToken(owner, ['read:repository', 'read:user', 'read:organization']);
    const listed = new Set(fullNames([...listedMine, ...listedOrg]));
    type Row = { id: number; repo: { full_name: string } | null };
    const feed = `/users/${owner.username}/activities/feeds?only-performed-by=true&limit=50`;
    const everything: Row[] = (await forge.request('GET', feed, { token: full })).body;
    const expected = everything.filter((row) => row.repo && listed.has(row.repo.full_name));
    // Creating each repository is an activity of the owner: some in listed ones, more in others.
    expect(expected.length).toBe(listed.size);
    expect(everything.length).toBeGreaterThan(expected.length);

    const first = await forge.request('GET', `${feed.replace('limit=50', 'limit=4')}&page=1`, {
      token: scoped,
    });
    const second = await forge.request('GET', `${feed.replace('limit=50', 'limit=4')}&page=2`, {
      token: scoped,
    });
    for (const res of [first, second]) {
      expect(res.status).toBe(200);
      expect(res.headers.get('x-total-count')).toBe(String(expected.length));
    }
    expect([...first.body, ...second.body].map((row: Row) => row.id)).toEqual(expected.map((row) => row.id));

    type Bucket = { contributions: number };
    const sum = (buckets: Bucket[]) => buckets.reduce((total, bucket) => total + bucket.contributions, 0);
    const heatmap = `/users/${owner.username}/heatmap`;
    expect(sum((await forge.request('GET', heatmap, { token: full })).body)).toBe(everything.length);
    // Twice: the heatmap cache keeps one answer per credential's repositories.
    for (let round = 0; round < 2; round++) {
      expect(sum((await forge.request('GET', heatmap, { token: scoped })).body)).toBe(expected.length);
      expect(sum((await forge.request('GET', heatmap, { token: full })).body)).toBe(everything.length);
    }
  });

  it("a public-only token reads its own user's feed and heatmap as an anonymous reader would", async () => {
    const full = await forge.createToken(owner, ['read:user']);
    const publicOnly = await forge.createToken(owner, ['read:user', 'public-only']);
    const feed = `/users/${owner.username}/activities/feeds?only-performed-by=true&limit=50`;
    const anonymous = await forge.request('GET', feed);
    const limited = await forge.request('GET', feed, { token: publicOnly });
    const everything = await forge.request('GET', feed, { token: full });
    // The same rows (each shown to its reader: the owner's permissions on the repositories differ).
    const ids = (rows: Array<{ id: number }>) => rows.map((row) => row.id);
    expect(ids(limited.body)).toEqual(ids(anonymous.body));
    expect(limited.headers.get('x-total-count')).toBe(anonymous.headers.get('x-total-count'));
    // The owner's private repositories were created too: the full token sees more.
    expect(everything.body.length).toBeGreaterThan(anonymous.body.length);
    const heatmap = `/users/${owner.username}/heatmap`;
    const sum = (buckets: Array<{ contributions: number }>) =>
      buckets.reduce((total, bucket) => total + bucket.contributions, 0);
    const anonymousCount = sum((await forge.request('GET', heatmap)).body);
    expect(sum((await forge.request('GET', heatmap, { token: publicOnly })).body)).toBe(anonymousCount);
    expect(sum((await forge.request('GET', heatmap, { token: full })).body)).toBeGreaterThan(anonymousCount);
  });

  it('the same listings with an unscoped token of the same owner count every repository', async () => {
    const full = await forge.createToken(owner, ['read:repository', 'read:user', 'read:organization']);
    const totals = await Promise.all(
      cases().map(async ({ route }) => (await forge.request('GET', route, { token: full })).headers),
    );
    expect(totals.map((headers) => headers.get('x-total-count'))).toEqual(['15', '15', '9', '6']);
  });
});
