// Hostile input on every hooks route: wrong JSON types, a 1 MB URL, NUL bytes, unknown event names,
// missing or under-scoped credentials. Each gets a 4xx in Gitea's error shape and changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestForge, type TestForge, type TestUser, uniqueName } from './harness.js';
import { createRepo } from './repo-fixtures.js';

describe('hooks routes refuse hostile input and change nothing', () => {
  let forge: TestForge;
  let owner: TestUser;
  let token: string;
  let readOnly: string;
  let org: string;
  let repoPath: string;
  let swagger: string;

  const good = () => ({
    type: 'gitea',
    config: { url: 'http://127.0.0.1:9/hook', content_type: 'json' },
    events: ['push'],
    active: true,
  });

  /** Every place hooks live, with a token that may manage its hooks. */
  const bases = () => [
    { base: `${repoPath}/hooks`, token },
    { base: `/orgs/${org}/hooks`, token },
    { base: '/user/hooks', token },
    { base: '/admin/hooks', token: forge.admin.token },
  ];

  beforeAll(async () => {
    forge = await startTestForge();
    owner = await forge.createUser();
    token = await forge.createToken(owner, ['write:repository', 'write:user', 'write:organization']);
    readOnly = await forge.createToken(owner, ['read:repository', 'read:user', 'read:organization']);
    org = uniqueName('org');
    await forge.createOrg(token, { username: org });
    repoPath = (await createRepo(forge, token)).path;
    swagger = `${forge.appUrl}api/swagger`;
  });
  afterAll(async () => {
    await forge.close();
  });

  const hooksOf = async (base: string, as: string) => {
    const list = await forge.request('GET', base, { token: as });
    expect(list.status).toBe(200);
    return list.body as unknown[];
  };

  it('wrong JSON types are 422 with the field named', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...good(), type: 1 }, '[Type]: Json'],
      [{ ...good(), config: 'http://x' }, '[Config]: Json'],
      [{ ...good(), config: { url: 5, content_type: 'json' } }, '[Config]: Json'],
      [{ ...good(), events: 'push' }, '[Events]: Json'],
      [{ ...good(), active: 'yes' }, '[Active]: Json'],
      [{ ...good(), branch_filter: ['main'] }, '[BranchFilter]: Json'],
    ];
    for (const { base, token: as } of bases()) {
      for (const [body, message] of cases) {
        const response = await forge.request('POST', base, { token: as, body });
        expect(response.status, `${base} ${JSON.stringify(body)}`).toBe(422);
        expect(response.body).toEqual({ message, url: swagger });
      }
      expect(await hooksOf(base, as)).toEqual([]);
    }
  });

  it('a 1 MB URL, NUL bytes, unknown events, bad content types and URLs are refused', async () => {
    const huge = `http://example.com/${'a'.repeat(1024 * 1024)}`;
    for (const { base, token: as } of bases()) {
      const big = await forge.request('POST', base, {
        token: as,
        body: { ...good(), config: { url: huge, content_type: 'json' } },
      });
      expect([413, 422]).toContain(big.status);
      expect(big.body.url).toBe(swagger);
      const refusals: Array<[Record<string, unknown>, string]> = [
        [
          { ...good(), config: { url: 'http://a\u0000b/', content_type: 'json' } },
          '[Config]: invalid characters (NUL or lone surrogate)',
        ],
        [{ ...good(), events: ['push', 'bogus'] }, 'Invalid hook event: bogus'],
        [
          { ...good(), type: 'telegram' },
          'Invalid hook type: telegram (one of gitea, gogs, slack, discord, msteams)',
        ],
        [{ ...good(), config: { url: 'http://x/' } }, 'Missing config option: content_type'],
        [{ ...good(), config: { content_type: 'json' } }, 'Missing config option: url'],
        [{ ...good(), config: { url: 'http://x/', content_type: 'xml' } }, 'Invalid content type'],
        [
          { ...good(), config: { url: 'file:///etc/passwd', content_type: 'json' } },
          'Invalid url: file:///etc/passwd',
        ],
        [{ ...good(), branch_filter: '{main' }, 'Invalid branch filter: {main'],
        [{ ...good(), type: 'slack' }, 'Missing config option: channel'],
      ];
      for (const [body, message] of refusals) {
        const response = await forge.request('POST', base, { token: as, body });
        expect(response.status, `${base} ${message}`).toBe(422);
        expect(response.body).toEqual({ message, url: swagger });
      }
      expect(await hooksOf(base, as)).toEqual([]);
    }
  });

  it('missing credentials are 401, read-only tokens 403, strangers 403 or 404', async () => {
    const stranger = await forge.createUser();
    const strangerToken = await forge.createToken(stranger, [
      'write:repository',
      'write:organization',
      'write:admin',
    ]);
    for (const { base, token: as } of bases()) {
      const anonymous = await forge.request('POST', base, { body: good() });
      expect([401, 404], base).toContain(anonymous.status);
      expect(anonymous.body.message).toBeTypeOf('string');
      const weak = await forge.request('POST', base, { token: readOnly, body: good() });
      expect(weak.status, base).toBe(403);
      expect(weak.body.message).toMatch(/^token does not have at least one of required scope/);
      if (base !== '/user/hooks') {
        const foreign = await forge.request('POST', base, { token: strangerToken, body: good() });
        expect(foreign.status, base).toBe(403);
      }
      expect(await hooksOf(base, as)).toEqual([]);
    }
    // A repository the caller cannot see is 404, as any missing repository.
    const hidden = await createRepo(forge, token, { private: true });
    const invisible = await forge.request('GET', `${hidden.path}/hooks`, { token: strangerToken });
    expect(invisible.status).toBe(404);
  });

  it('ids that are not numbers, unknown hooks and unknown deliveries are 404 on every route', async () => {
    for (const { base, token: as } of bases()) {
      const created = await forge.request('POST', base, { token: as, body: good() });
      expect(created.status).toBe(201);
      const id = created.body.id as number;
      for (const [method, path] of [
        ['GET', `${base}/abc`],
        ['GET', `${base}/99999999`],
        ['PATCH', `${base}/99999999`],
        ['DELETE', `${base}/99999999`],
        ['GET', `${base}/99999999/deliveries`],
        ['GET', `${base}/${id}/deliveries/abc`],
        ['GET', `${base}/${id}/deliveries/424242`],
        ['POST', `${base}/${id}/deliveries/424242/attempts`],
      ] as const) {
        const response = await forge.request(method, path, {
          token: as,
          body: method === 'PATCH' ? {} : undefined,
        });
        expect(response.status, `${method} ${path}`).toBe(404);
        expect(response.body).toEqual({
          errors: null,
          message: "The target couldn't be found.",
          url: swagger,
        });
      }
      const edit = await forge.request('PATCH', `${base}/${id}`, { token: as, body: { events: ['nope'] } });
      expect(edit.status).toBe(422);
      expect((await forge.request('GET', `${base}/${id}`, { token: as })).body.events).toEqual(['push']);
      expect((await forge.request('DELETE', `${base}/${id}`, { token: as })).status).toBe(204);
    }
  });

  it('system hooks are for site administrators only', async () => {
    const adminScoped = await forge.createToken(owner, ['write:admin']);
    const refused = await forge.request('POST', '/admin/hooks', { token: adminScoped, body: good() });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ message: 'user should be the site admin', url: swagger });
  });
});
