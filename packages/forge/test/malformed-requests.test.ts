// Malformed requests answer 4xx in Gitea's error format and change nothing (issue 21, defect 4); the
// forge-postgres project runs this file on PostgreSQL, where NUL and over-long index rows used to be 500s.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestForge, type TestForge } from './harness.js';
import { createRepo, type TestRepo } from './repo-fixtures.js';
import { snapshotState } from './state-snapshot.js';

describe('malformed requests', () => {
  let forge: TestForge;
  let token: string;
  let repo: TestRepo;
  let release: { id: number };

  beforeAll(async () => {
    forge = await startTestForge();
    token = forge.admin.token;
    repo = await createRepo(forge, token);
    release = (
      await forge.request('POST', `${repo.path}/releases`, { token, body: { tag_name: 'v1', name: 'one' } })
    ).body;
  });
  afterAll(() => forge.close());

  /** Sends the request and asserts its status and that the state is exactly as before. */
  async function refused(
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string>; token?: string | null },
    status: number,
  ) {
    const before = await snapshotState(forge);
    const res = await forge.request(method, path, {
      token: options.token === null ? undefined : (options.token ?? token),
      body: options.body,
      headers: options.headers,
    });
    expect(res.status, `${method} ${path.slice(0, 80)}: ${res.text.slice(0, 200)}`).toBe(status);
    expect(await snapshotState(forge)).toBe(before);
    return res;
  }

  const MB = 'x'.repeat(1024 * 1024 - 64);

  it('tag_name and target of ~1 MB are 422 before git (no spawn E2BIG)', async () => {
    const res = await refused('POST', `${repo.path}/releases`, { body: { tag_name: MB } }, 422);
    expect(res.body).toEqual({ message: '[TagName]: MaxSize', url: `${forge.appUrl}api/swagger` });
    await refused('POST', `${repo.path}/releases`, { body: { tag_name: 'ok', target_commitish: MB } }, 422);
    await refused('POST', `${repo.path}/tags`, { body: { tag_name: MB } }, 422);
    await refused('POST', `${repo.path}/tags`, { body: { tag_name: 'ok', target: MB } }, 422);
  });

  it('over-long names for indexed columns are 422 (PostgreSQL: no "index row requires … bytes")', async () => {
    const basic = { username: forge.admin.username, password: forge.admin.password };
    const before = await snapshotState(forge);
    const res = await forge.request('POST', `/users/${forge.admin.username}/tokens`, {
      basic,
      body: { name: MB, scopes: ['all'] },
    });
    expect(res.status).toBe(422);
    expect(await snapshotState(forge)).toBe(before);
    await refused(
      'POST',
      '/admin/users',
      { body: { username: MB, email: 'a@example.com', password: 'long-enough' } },
      422,
    );
    await refused('POST', '/orgs', { body: { username: MB } }, 422);
    await refused('POST', '/user/repos', { body: { name: MB } }, 422);
    await refused('POST', `${repo.path}/tag_protections`, { body: { name_pattern: MB } }, 422);
  });

  it('a 1 MB target_commitish in PATCH is refused, and the release stays editable', async () => {
    await refused('PATCH', `${repo.path}/releases/${release.id}`, { body: { target_commitish: MB } }, 422);
    const edited = await forge.request('PATCH', `${repo.path}/releases/${release.id}`, {
      token,
      body: { body: 'still editable' },
    });
    expect(edited.status).toBe(200);
  });

  it('a 300-character tag name is 422, not a git failure', async () => {
    await refused('POST', `${repo.path}/releases`, { body: { tag_name: 'a'.repeat(300) } }, 422);
    // Within 255 characters but over 255 bytes in one ref component: git could not write the ref file.
    await refused('POST', `${repo.path}/releases`, { body: { tag_name: 'é'.repeat(200) } }, 422);
    await refused('POST', `${repo.path}/tags`, { body: { tag_name: 'é'.repeat(200) } }, 422);
  });

  it('NUL and lone surrogates in JSON strings are 422 and leave no tag behind', async () => {
    const nul = await refused('POST', `${repo.path}/releases`, { body: { tag_name: 'v\u0000x' } }, 422);
    expect(nul.body.message).toBe('[TagName]: invalid characters (NUL or lone surrogate)');
    await refused('POST', `${repo.path}/releases`, { body: { tag_name: 'v\uD800x' } }, 422);
    await refused('POST', `${repo.path}/releases`, { body: { tag_name: 'ok2', body: 'a\u0000b' } }, 422);
    await refused('POST', `${repo.path}/tags`, { body: { tag_name: 'x\uDC00' } }, 422);
    await refused('PATCH', `${repo.path}/releases/${release.id}`, { body: { name: '\u0000' } }, 422);
  });

  it('numbers and booleans where a string is due are 422 (no coercion)', async () => {
    for (const tag_name of [1, true, null, ['v2'], { a: 1 }]) {
      const res = await refused('POST', `${repo.path}/releases`, { body: { tag_name } }, 422);
      expect(res.body.message).toMatch(/^\[TagName\]: /);
    }
    await refused('POST', `${repo.path}/releases`, { body: { tag_name: 'v3', draft: 'true' } }, 422);
    await refused('PATCH', `${repo.path}/releases/${release.id}`, { body: { prerelease: 1 } }, 422);
  });

  it('NUL in a path segment is the 404 of an unknown name, even anonymously', async () => {
    await refused('GET', '/users/%00', { token: null }, 404);
    await refused('GET', '/repos/%00/r/releases', { token: null }, 404);
    await refused('GET', `${repo.path}/releases/tags/%00`, { token: null }, 404);
    // Percent-encoding that decodes to no text at all (a lone surrogate's bytes) names nothing either.
    const bad = await refused('GET', '/users/%ED%A0%80', { token: null }, 404);
    expect(bad.body).toEqual({
      errors: null,
      message: "The target couldn't be found.",
      url: `${forge.appUrl}api/swagger`,
    });
  });

  it('NUL in credentials is a 401, in a query value (token, sudo, q) a 422', async () => {
    await refused('GET', '/version', { token: null, headers: { authorization: 'Basic ADoA' } }, 401);
    await refused('GET', '/user', { token: null, headers: { authorization: `token ab%00` } }, 401);
    await refused('GET', '/user?token=%00', { token: null }, 422);
    await refused('GET', '/user?sudo=a%00', {}, 422);
    await refused('GET', '/user', { headers: { sudo: 'nobody-\u00e9x' } }, 404);
    await refused('GET', '/users/search?q=%00', { token: null }, 422);
  });

  it('the user search keyword is never query syntax', async () => {
    for (const q of ['"', '""', 'a"b', "'", '%', '_', '\\', 'NEAR(a b)', '* OR 1', 'a AND b', '^x', '-x']) {
      const res = await forge.request('GET', `/users/search?q=${encodeURIComponent(q)}`);
      expect(res.status, `q=${q}: ${res.text}`).toBe(200);
      expect(res.body.ok).toBe(true);
    }
  });
});
