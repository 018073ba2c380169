// Property test over the JSON routes (issue 21, defect 4): whatever body, path segment or query a client
// sends, the answer is never 5xx, and a refused request (4xx) changes nothing — no row, ref or file.
// The forge-postgres project runs it on PostgreSQL, where NUL and over-long index rows used to be 500s.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestForge, type TestForge } from './harness.js';
import { createRepo, type TestRepo } from './repo-fixtures.js';
import { snapshotState } from './state-snapshot.js';

const RUNS = 150;

/** Strings that broke forges before: huge, NUL, lone surrogates, quotes, ref-name traps, numbers-as-text. */
const nastyString = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'v\u0000',
    '\uD800',
    'a\uDC00b',
    '"',
    "'",
    '%',
    '..',
    '-x',
    '--force',
    '/',
    'a/../b',
    'refs/heads/main',
    'main',
    'v1',
    '@{-1}',
    'a'.repeat(256),
    'é'.repeat(200),
    'x'.repeat(300),
    'y'.repeat(70_000),
    '1',
    'true',
    'null',
  ),
);
const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: nastyString },
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(nastyString, { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), nastyString, { maxKeys: 2 }),
);

/** Percent-encoding that also carries lone surrogates (as their WTF-8 bytes), which encodeURIComponent refuses. */
function percentEncode(text: string): string {
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) {
      const bytes = [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)];
      out += bytes.map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else out += encodeURIComponent(char);
  }
  return out;
}

interface Route {
  method: string;
  path: (segment: string) => string;
  fields: string[];
}

describe('fuzz: JSON routes never answer 5xx and refusals change nothing', () => {
  let forge: TestForge;
  let repo: TestRepo;
  let routes: Route[];

  beforeAll(async () => {
    forge = await startTestForge();
    repo = await createRepo(forge, forge.admin.token, { name: 'fuzzed' });
    const release = await forge.request('POST', `${repo.path}/releases`, {
      token: forge.admin.token,
      body: { tag_name: 'v1', name: 'one' },
    });
    const org = await forge.createOrg(forge.admin.token, {});
    const user = await forge.createUser();
    const r = repo.path;
    routes = [
      {
        method: 'POST',
        path: () => `${r}/releases`,
        fields: ['tag_name', 'tag_message', 'target_commitish', 'name', 'body', 'draft', 'prerelease'],
      },
      {
        method: 'PATCH',
        path: (s) => `${r}/releases/${s || release.body.id}`,
        fields: ['tag_name', 'target_commitish', 'name', 'body', 'draft', 'prerelease'],
      },
      { method: 'POST', path: () => `${r}/tags`, fields: ['tag_name', 'message', 'target'] },
      {
        method: 'POST',
        path: () => `${r}/tag_protections`,
        fields: ['name_pattern', 'whitelist_usernames', 'whitelist_teams'],
      },
      {
        method: 'PATCH',
        path: () => r,
        fields: ['name', 'description', 'website', 'private', 'default_branch'],
      },
      {
        method: 'PUT',
        path: (s) => `${r}/collaborators/${s || user.username}`,
        fields: ['permission'],
      },
      {
        method: 'POST',
        path: () => '/user/repos',
        fields: ['name', 'description', 'private', 'auto_init', 'default_branch', 'readme'],
      },
      {
        method: 'POST',
        path: () => '/admin/users',
        fields: [
          'username',
          'email',
          'password',
          'full_name',
          'login_name',
          'must_change_password',
          'visibility',
        ],
      },
      {
        method: 'PATCH',
        path: (s) => `/admin/users/${s || user.username}`,
        fields: [
          'email',
          'full_name',
          'website',
          'location',
          'description',
          'admin',
          'visibility',
          'login_name',
        ],
      },
      {
        method: 'POST',
        path: () => '/orgs',
        fields: ['username', 'full_name', 'email', 'visibility', 'website'],
      },
      {
        method: 'POST',
        path: (s) => `/orgs/${s || org.name}/teams`,
        fields: ['name', 'description', 'permission', 'units', 'units_map', 'includes_all_repositories'],
      },
      { method: 'POST', path: () => '/user/keys', fields: ['title', 'key', 'read_only'] },
      {
        method: 'POST',
        path: () => '/user/applications/oauth2',
        fields: ['name', 'redirect_uris', 'confidential_client'],
      },
      { method: 'PUT', path: (s) => `${r}/teams/${s || 'owners'}`, fields: [] },
      { method: 'GET', path: (s) => `/users/search?q=${s}`, fields: [] },
      { method: 'GET', path: (s) => `/users/${s || 'x'}`, fields: [] },
      { method: 'GET', path: (s) => `${r}/releases/tags/${s || 'v1'}`, fields: [] },
    ];
  });
  afterAll(() => forge.close());

  it(`${RUNS} generated requests: status < 500; every 4xx leaves rows, refs and files as they were`, async () => {
    const request = fc.record({
      route: fc.nat(),
      // Sometimes a path segment of its own (percent-encoded, so NUL and surrogates reach the router).
      segment: fc.option(nastyString, { freq: 3 }),
      body: fc.oneof(
        { weight: 6, arbitrary: fc.constant('fields') },
        fc.constant('array'),
        fc.constant('scalar'),
        fc.constant('broken-json'),
      ),
      values: fc.array(fc.tuple(fc.nat(), nastyValue), { minLength: 1, maxLength: 4 }),
      anonymous: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(request, async (input) => {
        const route = routes[input.route % routes.length]!;
        const segment = input.segment === null ? '' : percentEncode(input.segment).slice(0, 4000);
        let body: unknown;
        if (route.method !== 'GET') {
          if (input.body === 'fields') {
            const names = [...route.fields, 'unknown_field'];
            body = Object.fromEntries(input.values.map(([i, v]) => [names[i % names.length], v]));
          } else if (input.body === 'array') body = input.values.map(([, v]) => v);
          else if (input.body === 'scalar') body = input.values[0]?.[1] ?? null;
          else body = '{"tag_name": "unterminated';
          if (body === undefined) body = null;
        }
        const before = await snapshotState(forge);
        const res = await forge.request(route.method, route.path(segment), {
          token: input.anonymous ? undefined : forge.admin.token,
          body: body === null ? 'null' : body,
        });
        const what = `${route.method} ${route.path(segment).slice(0, 120)} ${JSON.stringify(body)?.slice(0, 200)}`;
        expect(res.status, `${what} → ${res.text.slice(0, 300)}`).toBeLessThan(500);
        if (res.status >= 400) expect(await snapshotState(forge), `${what} → ${res.status}`).toBe(before);
      }),
      { numRuns: RUNS, seed: Number(process.env.FORGE_FUZZ_SEED ?? 21) },
    );
  }, 240_000);
});
