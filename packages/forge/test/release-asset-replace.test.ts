import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestForge, type TestForge, type TestUser } from './harness.js';
import { createRepo, type TestRepo } from './repo-fixtures.js';

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON fields and assert them exactly.
type Json = any;

/**
 * gitea-release-action replaces an asset by deleting it and uploading a file of the same name again
 * (its upload step lists the release's assets, deletes the one with the file's name, then POSTs).
 */
describe('release asset replaced by delete and upload again', () => {
  let forge: TestForge;
  let owner: TestUser;
  let token: string;
  let repo: TestRepo;

  beforeAll(async () => {
    forge = await startTestForge({ config: { attachment: { max_size: 1 } } });
    owner = await forge.createUser();
    token = await forge.createToken(owner, ['write:repository', 'write:user']);
    repo = await createRepo(forge, token);
  });
  afterAll(() => forge.close());

  const upload = (releaseId: number, name: string, body: Buffer) =>
    fetch(`${forge.url}/api/v1${repo.path}/releases/${releaseId}/assets?name=${name}`, {
      method: 'POST',
      headers: { Authorization: `token ${token}`, 'Content-Type': 'application/octet-stream' },
      body,
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as Json }));

  it('the second upload of the name is the only asset, and downloads serve its bytes', async () => {
    const release = await forge.request('POST', `${repo.path}/releases`, {
      token,
      body: { tag_name: 'v1.0.0' },
    });
    expect(release.status).toBe(201);
    const first = await upload(release.body.id, 'tool.tar.gz', Buffer.from('first build'));
    expect(first.status).toBe(201);
    const listed = await forge.request('GET', `${repo.path}/releases/${release.body.id}/assets`, { token });
    const existing = listed.body.find((asset: { name: string }) => asset.name === 'tool.tar.gz');
    const removed = await forge.request(
      'DELETE',
      `${repo.path}/releases/${release.body.id}/assets/${existing.id}`,
      {
        token,
      },
    );
    expect(removed.status).toBe(204);
    const second = await upload(release.body.id, 'tool.tar.gz', Buffer.from('second build!'));
    expect(second.status).toBe(201);
    expect(second.body.id).not.toBe(first.body.id);
    const after = await forge.request('GET', `${repo.path}/releases/${release.body.id}/assets`, { token });
    expect(after.body.map((asset: { name: string; size: number }) => [asset.name, asset.size])).toEqual([
      ['tool.tar.gz', 13],
    ]);
    const download = await fetch(
      `${forge.url}/${repo.owner}/${repo.name}/releases/download/v1.0.0/tool.tar.gz`,
      {
        headers: { Authorization: `token ${token}` },
      },
    );
    expect(await download.text()).toBe('second build!');
    const old = await fetch(second.body.browser_download_url.replace(second.body.uuid, first.body.uuid), {
      headers: { Authorization: `token ${token}` },
    });
    expect(old.status).toBe(404);
  });

  it('an upload over [attachment] max_size is 413 and the release keeps its assets', async () => {
    const release = await forge.request('POST', `${repo.path}/releases`, {
      token,
      body: { tag_name: 'v2.0.0' },
    });
    const big = await upload(release.body.id, 'big.bin', Buffer.alloc(1024 * 1024 + 1));
    expect([big.status, big.body.message]).toEqual([413, `attachment exceeds limit ${1024 * 1024}`]);
    const after = await forge.request('GET', `${repo.path}/releases/${release.body.id}/assets`, { token });
    expect(after.body).toEqual([]);
  });
});
