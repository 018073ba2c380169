import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestForge, type TestForge, uniqueName } from './harness.js';
import { createRepo } from './repo-fixtures.js';

/**
 * The provider's dependency `pacc` tests `value instanceof Iterator`, a global Node 22 added (iterator
 * helpers). On Node 20 the test supplies just that global — what `instanceof` needs: iterators are the
 * objects with `next` that iterate themselves — and then loads the package as published.
 */
async function loadProvider() {
  const scope = globalThis as { Iterator?: unknown };
  if (!scope.Iterator) {
    const isIterator = (value: unknown): boolean => {
      const candidate = value as { next?: unknown; [Symbol.iterator]?: unknown } | null;
      return (
        typeof candidate === 'object' &&
        candidate !== null &&
        typeof candidate.next === 'function' &&
        typeof candidate[Symbol.iterator] === 'function'
      );
    };
    scope.Iterator = Object.defineProperty(() => undefined, Symbol.hasInstance, { value: isIterator });
  }
  // @ts-expect-error the package ships JavaScript without type declarations for this entry point.
  return import('gitea-repository-provider');
}

/**
 * The registry's `gitea-repository-provider`, unchanged, lists repositories through GET /repos/search
 * (asking for limit=1000 and following the Link header) and reads branches of what it found.
 */
describe('gitea-repository-provider', () => {
  let forge: TestForge;
  const prefix = uniqueName('grp');
  const expected: string[] = [];
  let token = '';
  let outsiderToken = '';

  beforeAll(async () => {
    // A small page size makes the provider follow Link across several pages.
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
    const { GiteaProvider } = await loadProvider();
    const provider = new GiteaProvider({ api: `${forge.url}/api/v1/`, token: apiToken });
    const found: string[] = [];
    for await (const repository of provider.repositories('*/*')) found.push(repository.fullName);
    return { provider, found };
  };

  it('finds every repository the token may read, across pages', async () => {
    const { found } = await listAll(token);
    expect(found.sort()).toEqual([...expected].sort());
  });

  it('another user finds only the public ones', async () => {
    const { found } = await listAll(outsiderToken);
    expect(found.sort()).toEqual(expected.filter((name) => !/-(beta|epsilon)$/.test(name)).sort());
  });

  it('reads the branches of a listed repository', async () => {
    const { provider } = await listAll(token);
    const repository = await provider.repository(`${prefix}owner/${prefix}-alpha`);
    expect(repository.fullName).toBe(`${prefix}owner/${prefix}-alpha`);
    const branches: string[] = [];
    for await (const branch of repository.branches()) branches.push(branch.name);
    expect(branches).toEqual(['main']);
  });
});
