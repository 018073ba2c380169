import { giteaApi } from 'gitea-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestForge, type TestForge, uniqueName } from './harness.js';
import { createRepo } from './repo-fixtures.js';

/** The `page` a Link header's `rel="next"` URL asks for, or null on the last page. */
function nextPage(link: string | null): number | null {
  const next = link?.split(',').find((part) => /;\s*rel="next"/.test(part));
  const url = next && /<([^>]+)>/.exec(next)?.[1];
  return url ? Number(new URL(url).searchParams.get('page')) : null;
}

/**
 * A repository browser's walk (as Gitea clients such as gitea-repository-provider do it) with the registry's
 * gitea-js: GET /repos/search asking for limit=1000 and following the Link header to the end, then the
 * branches of what it found.
 */
describe('listing repositories through search and Link paging', () => {
  let forge: TestForge;
  const prefix = uniqueName('grp');
  const expected: string[] = [];
  let token = '';
  let outsiderToken = '';

  beforeAll(async () => {
    // A small page size makes the walk follow Link across several pages.
    forge = await startTestForge({ config: { api: { max_response_items: 2 } } });
    const owner = await forge.createUser({ username: `${prefix}owner` });
    token = await forge.createToken(owner, ['write:repository', 'write:user', 'write:organization']);
    const org = await forge.createOrg(token, { username: `${prefix}org` });
    for (const [name, options] of [
      ['alpha', {}],
      ['beta', { private: true }],
      ['gamma', { autoInit: false }],
      ['delta', { org: org.name }],
      ['epsilon', { org: org.name, private: true }],
    ] as const) {
      const repo = await createRepo(forge, token, { name: `${prefix}-${name}`, ...options });
      expected.push(`${repo.owner}/${repo.name}`);
    }
    const outsider = await forge.createUser();
    outsiderToken = await forge.createToken(outsider, ['read:repository']);
  });
  afterAll(() => forge.close());

  const listAll = async (apiToken: string) => {
    const client = giteaApi(forge.url, { token: apiToken, customFetch: fetch });
    const found: string[] = [];
    let pages = 0;
    for (let page: number | null = 1; page !== null; pages++) {
      const answer = await client.repos.repoSearch({ limit: 1000, page });
      expect(answer.status).toBe(200);
      expect(answer.data.ok).toBe(true);
      for (const repository of answer.data.data ?? []) found.push(repository.full_name ?? '');
      const next = nextPage(answer.headers.get('link'));
      if (next !== null) expect(next).toBe(page + 1);
      page = next;
    }
    return { client, found, pages };
  };

  it('finds every repository the token may read, across pages', async () => {
    const { found, pages } = await listAll(token);
    expect(found.sort()).toEqual([...expected].sort());
    expect(pages).toBe(3);
  });

  it('another user finds only the public ones', async () => {
    const { found } = await listAll(outsiderToken);
    expect(found.sort()).toEqual(expected.filter((name) => !/-(beta|epsilon)$/.test(name)).sort());
  });

  it('reads the branches of a listed repository', async () => {
    const { client, found } = await listAll(token);
    const [owner, name] = found.find((fullName) => fullName.endsWith('-alpha'))?.split('/') ?? [];
    expect(`${owner}/${name}`).toBe(`${prefix}owner/${prefix}-alpha`);
    const branches = await client.repos.repoListBranches(owner!, name!);
    expect(branches.status).toBe(200);
    expect(branches.data.map((branch) => branch.name)).toEqual(['main']);
  });
});
