import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestForge, type TestForge, type TestUser } from './harness.js';
import { createRepo, type TestRepo } from './repo-fixtures.js';

/** The read-only pages `html_url` points at: 200 HTML where the API answers, 404 exactly where it does not. */
describe('html_url pages', () => {
  let forge: TestForge;
  let owner: TestUser;
  let ownerToken: string;
  let readerToken: string;
  let writerToken: string;
  let strangerToken: string;
  let repo: TestRepo;
  let hidden: TestRepo;

  const page = (url: string, token?: string) => forge.request('GET', url, { token });
  /** Every absolute link or image of a page points back at this forge: nothing is loaded from elsewhere. */
  const expectSelfContained = (text: string) => {
    expect(text).not.toMatch(/<script/i);
    for (const [, url] of text.matchAll(/(?:src|href)="([^"]+)"/g)) {
      expect(url!.startsWith(forge.appUrl)).toBe(true);
    }
  };

  beforeAll(async () => {
    forge = await startTestForge();
    owner = await forge.createUser({ fullName: '<script>alert("owner")</script>' });
    const reader = await forge.createUser();
    const writer = await forge.createUser();
    ownerToken = await forge.createToken(owner, ['write:repository', 'write:user', 'write:organization']);
    readerToken = await forge.createToken(reader, ['read:repository', 'read:user']);
    writerToken = await forge.createToken(writer, ['read:repository', 'read:user']);
    strangerToken = await forge.createToken(await forge.createUser(), ['read:repository', 'read:user']);
    repo = await createRepo(forge, ownerToken);
    hidden = await createRepo(forge, ownerToken, { private: true });
    for (const [user, permission] of [
      [reader, 'read'],
      [writer, 'write'],
    ] as const) {
      await forge.request('PUT', `${repo.path}/collaborators/${user.username}`, {
        token: ownerToken,
        body: { permission },
      });
    }
    await forge.request('PATCH', repo.path, {
      token: ownerToken,
      body: { description: 'A <b>bold</b> & "quoted" repo' },
    });
  });
  afterAll(() => forge.close());

  it('a user html_url answers an escaped, self-contained page', async () => {
    const user = (await forge.request('GET', `/users/${owner.username}`)).body;
    expect(user.html_url).toBe(`${forge.appUrl}${owner.username}`);
    const res = await page(user.html_url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(
      "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'",
    );
    expect(res.text).toContain('&lt;script&gt;alert(&quot;owner&quot;)&lt;/script&gt;');
    expect(res.text).toContain(`${user.avatar_url}?size=128`);
    expectSelfContained(res.text);
    // Its repositories as GET /users/{username}/repos lists them: the private one only for who may read it.
    expect(res.text).toContain(`href="${forge.appUrl}${repo.owner}/${repo.name}"`);
    expect(res.text).not.toContain(hidden.name);
    expect((await page(user.html_url, ownerToken)).text).toContain(
      `href="${forge.appUrl}${hidden.owner}/${hidden.name}"`,
    );
    expect((await page(user.html_url, strangerToken)).text).not.toContain(hidden.name);
  });

  it('hidden users and organizations are 404 exactly as GET /users/{username}', async () => {
    const privateUser = await forge.createUser({ visibility: 'private' });
    const limited = await forge.createUser({ visibility: 'limited' });
    const privateToken = await forge.createToken(privateUser, ['read:user']);
    expect((await page(`${forge.appUrl}${privateUser.username}`)).status).toBe(404);
    expect((await page(`${forge.appUrl}${privateUser.username}`, strangerToken)).status).toBe(404);
    expect((await page(`${forge.appUrl}${privateUser.username}`, privateToken)).status).toBe(200);
    expect((await page(`${forge.appUrl}${privateUser.username}`, forge.admin.token)).status).toBe(200);
    expect((await page(`${forge.appUrl}${limited.username}`)).status).toBe(404);
    expect((await page(`${forge.appUrl}${limited.username}`, strangerToken)).status).toBe(200);
    expect((await page(`${forge.appUrl}no-such-user-here`)).status).toBe(404);

    const org = await forge.createOrg(ownerToken, { visibility: 'private' });
    const orgUser = (await forge.request('GET', `/users/${org.name}`, { token: ownerToken })).body;
    expect((await page(orgUser.html_url)).status).toBe(404);
    expect((await page(orgUser.html_url, strangerToken)).status).toBe(404);
    const mine = await page(orgUser.html_url, ownerToken);
    expect(mine.status).toBe(200);
    expect(mine.text).toContain(`Organization ${org.name}`);
    const publicOrg = await forge.createOrg(ownerToken, {});
    expect((await page(`${forge.appUrl}${publicOrg.name}`)).status).toBe(200);
  });

  it('a repository html_url answers its page; a private one is 404 to whoever cannot read it', async () => {
    const body = (await forge.request('GET', repo.path)).body;
    const res = await page(body.html_url);
    expect(res.status).toBe(200);
    expect(res.text).toContain('A &lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot; repo');
    expect(res.text).toContain(`${body.html_url}/archive/${repo.default_branch}.tar.gz`);
    expectSelfContained(res.text);
    const hiddenUrl = `${forge.appUrl}${hidden.owner}/${hidden.name}`;
    expect((await page(hiddenUrl)).status).toBe(404);
    expect((await page(hiddenUrl, strangerToken)).status).toBe(404);
    expect((await page(hiddenUrl, ownerToken)).status).toBe(200);
    expect((await page(`${forge.appUrl}${owner.username}/no-such-repo`)).status).toBe(404);
  });

  it('a release html_url shows notes (escaped), assets and source archives; hidden drafts are 404', async () => {
    const release = (
      await forge.request('POST', `${repo.path}/releases`, {
        token: ownerToken,
        body: { tag_name: 'v1.0', name: 'First <release>', body: 'Fixes <img src=x onerror=alert(1)>' },
      })
    ).body;
    const upload = await fetch(
      `${forge.url}/api/v1${repo.path}/releases/${release.id}/assets?name=tool.bin`,
      {
        method: 'POST',
        headers: { authorization: `token ${ownerToken}`, 'content-type': 'application/octet-stream' },
        body: 'binary',
      },
    );
    const asset = (await upload.json()) as { browser_download_url: string };
    const res = await page(release.html_url);
    expect(res.status).toBe(200);
    expect(res.text).toContain('First &lt;release&gt;');
    expect(res.text).toContain('Fixes &lt;img src=x onerror=alert(1)&gt;');
    expect(res.text).toContain(`href="${asset.browser_download_url}"`);
    expect(res.text).toContain(`href="${release.zipball_url}"`);
    expect(res.text).toContain(`href="${release.tarball_url}"`);
    expectSelfContained(res.text);
    // The repository page lists it.
    expect((await page(`${forge.appUrl}${repo.owner}/${repo.name}`)).text).toContain(release.html_url);

    const draft = (
      await forge.request('POST', `${repo.path}/releases`, {
        token: ownerToken,
        body: { tag_name: 'v2.0', name: 'Secret draft', draft: true },
      })
    ).body;
    expect((await page(draft.html_url)).status).toBe(404);
    expect((await page(draft.html_url, readerToken)).status).toBe(404);
    expect((await page(draft.html_url, writerToken)).status).toBe(200);
    expect((await page(`${forge.appUrl}${repo.owner}/${repo.name}`)).text).not.toContain('Secret draft');
    expect((await page(`${forge.appUrl}${repo.owner}/${repo.name}/releases/tag/nope`)).status).toBe(404);
  });
});
