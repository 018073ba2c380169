import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachmentPath } from '../src/services/attachment-files.js';
import { removeOrphanAttachmentFiles } from '../src/services/attachment-removal.js';
import { startTestForge, type TestForge, type TestUser } from './harness.js';
import { createRepo, type TestRepo } from './repo-fixtures.js';

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON fields and assert them exactly.
type Json = any;

/** Every file (not directory) under the forge's attachment storage, temporary uploads included. */
function storedFiles(forge: TestForge): string[] {
  const root = join(forge.ctx.config.dataDir, 'attachments');
  const walk = (dir: string): string[] => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return [];
    }
    return names.flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? walk(path) : [path];
    });
  };
  return walk(root);
}

function multipart(field: string, filename: string, content: Buffer, type = 'application/octet-stream') {
  const form = new FormData();
  form.append(field, new Blob([content], { type }), filename);
  return form;
}

// A 1×1 PNG: sniffed as image/png.
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
    '1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e2' +
    '2a7a3a0000000049454e44ae426082',
  'hex',
);

/** Gitea's release_attachment.go rules, the download links and the storage guarantees. */
describe('release assets', () => {
  let forge: TestForge;
  let owner: TestUser;
  let ownerToken: string;
  let readerToken: string;
  let writerToken: string;
  let readOnlyOwnerToken: string;
  let repo: TestRepo;
  let published: { id: number; tag_name: string };
  let draft: { id: number; tag_name: string };

  const upload = (
    releaseId: number,
    body: FormData | Buffer,
    options: { token?: string; name?: string; contentType?: string } = {},
  ) => {
    const query = options.name === undefined ? '' : `?name=${encodeURIComponent(options.name)}`;
    const headers: Record<string, string> = {};
    if (options.token) headers.authorization = `token ${options.token}`;
    if (Buffer.isBuffer(body)) headers['content-type'] = options.contentType ?? 'application/octet-stream';
    return fetch(`${forge.url}/api/v1${repo.path}/releases/${releaseId}/assets${query}`, {
      method: 'POST',
      headers,
      body,
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as Json }));
  };

  beforeAll(async () => {
    forge = await startTestForge();
    owner = await forge.createUser();
    const reader = await forge.createUser();
    const writer = await forge.createUser();
    ownerToken = await forge.createToken(owner, ['write:repository', 'write:user']);
    readOnlyOwnerToken = await forge.createToken(owner, ['read:repository']);
    readerToken = await forge.createToken(reader, ['write:repository']);
    writerToken = await forge.createToken(writer, ['write:repository']);
    repo = await createRepo(forge, ownerToken);
    for (const [user, permission] of [
      [reader, 'read'],
      [writer, 'write'],
    ] as const) {
      const res = await forge.request('PUT', `${repo.path}/collaborators/${user.username}`, {
        token: ownerToken,
        body: { permission },
      });
      expect(res.status).toBe(204);
    }
    published = (
      await forge.request('POST', `${repo.path}/releases`, { token: ownerToken, body: { tag_name: 'v1.0' } })
    ).body;
    draft = (
      await forge.request('POST', `${repo.path}/releases`, {
        token: ownerToken,
        body: { tag_name: 'v2.0-draft', draft: true },
      })
    ).body;
  });
  afterAll(() => forge.close());

  it('POST multipart: 201 with the Attachment shape, the file name from the part, stored by uuid', async () => {
    const content = randomBytes(3000);
    const res = await upload(published.id, multipart('attachment', 'data.bin', content), {
      token: ownerToken,
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual([
      'id',
      'name',
      'size',
      'download_count',
      'created_at',
      'uuid',
      'browser_download_url',
    ]);
    expect(res.body).toMatchObject({ name: 'data.bin', size: 3000, download_count: 0 });
    expect(res.body.browser_download_url).toBe(`${forge.appUrl}attachments/${res.body.uuid}`);
    expect(res.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)$/);
    const stored = storedFiles(forge).filter((path) => path.endsWith(res.body.uuid));
    expect(stored).toHaveLength(1);
    expect(readFileSync(stored[0]!).equals(content)).toBe(true);
  });

  it('POST multipart: ?name= overrides the file name (TestAPIUploadAssetRelease)', async () => {
    const res = await upload(published.id, multipart('attachment', 'image.png', PNG), {
      token: ownerToken,
      name: 'test-asset',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'test-asset', size: PNG.length });
  });

  it('POST raw octet-stream body: 201 with ?name=, 400 without a name', async () => {
    const ok = await upload(published.id, Buffer.from('stream'), { token: ownerToken, name: 'stream.bin' });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ name: 'stream.bin', size: 6 });
    const unnamed = await upload(published.id, Buffer.from('stream'), { token: ownerToken });
    expect(unnamed.status).toBe(400);
    expect(unnamed.body).toEqual({
      message: 'Could not determine name of attachment.',
      url: `${forge.appUrl}api/swagger`,
    });
  });

  it('POST multipart without an `attachment` part is 400 and stores nothing', async () => {
    const before = storedFiles(forge).length;
    const res = await upload(published.id, multipart('file', 'x.bin', Buffer.from('x')), {
      token: ownerToken,
    });
    expect(res.status).toBe(400);
    expect(storedFiles(forge)).toHaveLength(before);
  });

  it('changes need a signed-in writer of releases and a write:repository token; reads do not', async () => {
    const file = () => multipart('attachment', 'a.txt', Buffer.from('a'));
    expect((await upload(published.id, file())).status).toBe(401);
    expect((await upload(published.id, file(), { token: readerToken })).status).toBe(403);
    const weak = await upload(published.id, file(), { token: readOnlyOwnerToken });
    expect(weak.status).toBe(403);
    expect(weak.body.message).toBe(
      'token does not have at least one of required scope(s), required=[write:repository], token scope=read:repository',
    );
    expect((await upload(published.id, file(), { token: writerToken })).status).toBe(201);
    const list = await forge.request('GET', `${repo.path}/releases/${published.id}/assets`);
    expect(list.status).toBe(200);
    expect(list.body.map((a: { name: string }) => a.name)).toEqual([
      'data.bin',
      'test-asset',
      'stream.bin',
      'a.txt',
    ]);
  });

  it('a release carries its assets, one query per page (list, by id, by tag)', async () => {
    const list = await forge.request('GET', `${repo.path}/releases`);
    const one = await forge.request('GET', `${repo.path}/releases/${published.id}`);
    const byTag = await forge.request('GET', `${repo.path}/releases/tags/v1.0`);
    const assets = (await forge.request('GET', `${repo.path}/releases/${published.id}/assets`)).body;
    expect(one.body.assets).toEqual(assets);
    expect(byTag.body.assets).toEqual(assets);
    expect(assets.length).toBeGreaterThan(1);
    expect(list.body.find((r: { id: number }) => r.id === published.id).assets).toEqual(assets);
    // The list reads its page joined with the attachments: still one entry per release.
    const ids = list.body.map((r: { id: number }) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    const withDrafts = await forge.request('GET', `${repo.path}/releases`, { token: ownerToken });
    expect(withDrafts.body.map((r: { id: number; assets: unknown[] }) => [r.id, r.assets.length])).toEqual([
      [draft.id, 0],
      [published.id, assets.length],
    ]);
    expect(one.body.upload_url).toBe(`${forge.appUrl}api/v1${repo.path}/releases/${published.id}/assets`);
  });

  it('the latest release (read with its publisher and assets in one statement) answers as by id', async () => {
    for (const name of ['latest-1.txt', 'latest-2.txt']) {
      const res = await upload(published.id, multipart('attachment', name, Buffer.from(name)), {
        token: ownerToken,
      });
      expect(res.status).toBe(201);
    }
    const latest = await forge.request('GET', `${repo.path}/releases/latest`);
    const byId = await forge.request('GET', `${repo.path}/releases/${published.id}`);
    expect(latest.status).toBe(200);
    expect(latest.body.assets.length).toBeGreaterThan(1);
    expect(latest.body).toEqual(byId.body);
  });

  it('GET/PATCH/DELETE one asset: 404 through another release, PATCH renames with 201, DELETE removes the file', async () => {
    const created = await upload(published.id, multipart('attachment', 'old.txt', Buffer.from('old')), {
      token: ownerToken,
    });
    const path = `${repo.path}/releases/${published.id}/assets/${created.body.id}`;
    expect((await forge.request('GET', path)).body).toEqual(created.body);
    expect(
      (
        await forge.request('GET', `${repo.path}/releases/${draft.id}/assets/${created.body.id}`, {
          token: ownerToken,
        })
      ).status,
    ).toBe(404);
    expect((await forge.request('GET', `${repo.path}/releases/${published.id}/assets/999999`)).status).toBe(
      404,
    );
    const renamed = await forge.request('PATCH', path, { token: ownerToken, body: { name: 'new.txt' } });
    expect(renamed.status).toBe(201);
    expect(renamed.body).toEqual({ ...created.body, name: 'new.txt' });
    const unchanged = await forge.request('PATCH', path, { token: ownerToken, body: {} });
    expect(unchanged.body.name).toBe('new.txt');
    expect((await forge.request('PATCH', path, { token: readerToken, body: { name: 'x' } })).status).toBe(
      403,
    );
    expect((await forge.request('DELETE', path, { token: readerToken })).status).toBe(403);
    expect(storedFiles(forge).some((file) => file.endsWith(created.body.uuid))).toBe(true);
    const deleted = await forge.request('DELETE', path, { token: ownerToken });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect(storedFiles(forge).some((file) => file.endsWith(created.body.uuid))).toBe(false);
    expect((await forge.request('GET', path)).status).toBe(404);
    expect((await forge.request('DELETE', path, { token: ownerToken })).status).toBe(404);
  });

  it('downloads stream the exact bytes with type, length, disposition and ETag, and count', async () => {
    const content = randomBytes(200_000);
    const name = '报告 résumé.bin';
    const created = await upload(published.id, multipart('attachment', name, content), { token: ownerToken });
    expect(created.status).toBe(201);
    const byUuid = await fetch(created.body.browser_download_url);
    expect(byUuid.status).toBe(200);
    expect(Buffer.from(await byUuid.arrayBuffer()).equals(content)).toBe(true);
    expect(byUuid.headers.get('content-type')).toBe('application/octet-stream');
    expect(byUuid.headers.get('content-length')).toBe('200000');
    expect(byUuid.headers.get('content-disposition')).toBe(
      `inline; filename="?? r\u00e9sum\u00e9.bin"; filename*=UTF-8''%E6%8A%A5%E5%91%8A%20r%C3%A9sum%C3%A9.bin`,
    );
    expect(byUuid.headers.get('etag')).toBe(`"${created.body.uuid}"`);
    expect(byUuid.headers.get('x-content-type-options')).toBe('nosniff');
    const byTag = await fetch(
      `${forge.url}/${owner.username}/${repo.name}/releases/download/v1.0/${encodeURIComponent(name)}`,
    );
    expect(byTag.status).toBe(200);
    expect(Buffer.from(await byTag.arrayBuffer()).equals(content)).toBe(true);
    const cached = await fetch(created.body.browser_download_url, {
      headers: { 'if-none-match': `"${created.body.uuid}"` },
    });
    expect(cached.status).toBe(304);
    const after = await forge.request(
      'GET',
      `${repo.path}/releases/${published.id}/assets/${created.body.id}`,
    );
    expect(after.body.download_count).toBe(3);

    const png = await upload(published.id, multipart('attachment', 'pixel.png', PNG), { token: ownerToken });
    const image = await fetch(png.body.browser_download_url);
    expect(image.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await image.arrayBuffer()).equals(PNG)).toBe(true);
    const text = await upload(published.id, Buffer.from('<script>alert(1)</script>'), {
      token: ownerToken,
      name: 'page.html',
    });
    const page = await fetch(text.body.browser_download_url);
    expect(page.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain('sandbox');
  });

  it("a draft's assets are invisible to those who may not see the draft (GHSA-q9pg-jj6x-j9p6)", async () => {
    const secret = await upload(draft.id, multipart('attachment', 'secret.bin', Buffer.from('secret')), {
      token: ownerToken,
    });
    expect(secret.status).toBe(201);
    const assets = `${repo.path}/releases/${draft.id}/assets`;
    for (const token of [undefined, readerToken]) {
      expect((await forge.request('GET', assets, { token })).status).toBe(404);
      expect((await forge.request('GET', `${assets}/${secret.body.id}`, { token })).status).toBe(404);
      const headers: Record<string, string> = token ? { authorization: `token ${token}` } : {};
      expect((await fetch(secret.body.browser_download_url, { headers })).status).toBe(404);
      const byTag = `${forge.url}/${owner.username}/${repo.name}/releases/download/v2.0-draft/secret.bin`;
      expect((await fetch(byTag, { headers })).status).toBe(404);
    }
    expect(
      (await upload(draft.id, multipart('attachment', 'x', Buffer.from('x')), { token: readerToken })).status,
    ).toBe(403);
    const writerView = await fetch(secret.body.browser_download_url, {
      headers: { authorization: `token ${writerToken}` },
    });
    expect(writerView.status).toBe(200);
    expect(await writerView.text()).toBe('secret');
    expect((await forge.request('GET', assets, { token: writerToken })).body).toHaveLength(1);
  });

  it('private repositories: downloads are 404 to anonymous callers and strangers', async () => {
    const hidden = await createRepo(forge, ownerToken, { private: true });
    const rel = await forge.request('POST', `${hidden.path}/releases`, {
      token: ownerToken,
      body: { tag_name: 'v1' },
    });
    const res = await fetch(`${forge.url}/api/v1${hidden.path}/releases/${rel.body.id}/assets?name=x.txt`, {
      method: 'POST',
      headers: { authorization: `token ${ownerToken}`, 'content-type': 'application/octet-stream' },
      body: 'private bytes',
    });
    const asset: Json = await res.json();
    expect(res.status).toBe(201);
    expect((await fetch(asset.browser_download_url)).status).toBe(404);
    const stranger = await forge.createToken(await forge.createUser(), ['read:repository']);
    expect(
      (await fetch(asset.browser_download_url, { headers: { authorization: `token ${stranger}` } })).status,
    ).toBe(404);
    expect(
      (await fetch(`${forge.url}/${hidden.owner}/${hidden.name}/releases/download/v1/x.txt`)).status,
    ).toBe(404);
    const ok = await fetch(asset.browser_download_url, { headers: { authorization: `token ${ownerToken}` } });
    expect(await ok.text()).toBe('private bytes');
  });

  it('deleting a release removes its assets and their files', async () => {
    const rel = await forge.request('POST', `${repo.path}/releases`, {
      token: ownerToken,
      body: { tag_name: 'gone' },
    });
    const a = await upload(rel.body.id, multipart('attachment', 'a.bin', Buffer.from('a')), {
      token: ownerToken,
    });
    const b = await upload(rel.body.id, multipart('attachment', 'b.bin', Buffer.from('b')), {
      token: ownerToken,
    });
    const uuids = [a.body.uuid, b.body.uuid];
    expect(storedFiles(forge).filter((f) => uuids.some((u) => f.endsWith(u)))).toHaveLength(2);
    expect(
      (await forge.request('DELETE', `${repo.path}/releases/${rel.body.id}`, { token: ownerToken })).status,
    ).toBe(204);
    expect(storedFiles(forge).filter((f) => uuids.some((u) => f.endsWith(u)))).toHaveLength(0);
    expect((await fetch(a.body.browser_download_url)).status).toBe(404);
  });

  it('an interrupted upload leaves no file and no row', async () => {
    const rel = await forge.request('POST', `${repo.path}/releases`, {
      token: ownerToken,
      body: { tag_name: 'cut' },
    });
    const before = storedFiles(forge).length;
    const { port } = new URL(forge.url);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /api/v1${repo.path}/releases/${rel.body.id}/assets?name=cut.bin HTTP/1.1\r\n` +
        `Host: 127.0.0.1\r\nAuthorization: token ${ownerToken}\r\n` +
        'Content-Type: application/octet-stream\r\nContent-Length: 1000000\r\n\r\n',
    );
    socket.write(randomBytes(300_000));
    // Wait until the server holds the partial upload, then cut the connection.
    await expect.poll(() => storedFiles(forge).length, { timeout: 10_000 }).toBe(before + 1);
    socket.destroy();
    await expect.poll(() => storedFiles(forge).length, { timeout: 10_000 }).toBe(before);
    const list = await forge.request('GET', `${repo.path}/releases/${rel.body.id}/assets`);
    expect(list.body).toEqual([]);
  });
  it('the start-up sweep removes placed files no row points at (a crash between placing and recording)', async () => {
    const kept = await upload(published.id, multipart('attachment', 'kept.bin', Buffer.from('kept')), {
      token: ownerToken,
    });
    const orphan = attachmentPath(forge.ctx, randomUUID());
    mkdirSync(dirname(orphan), { recursive: true });
    writeFileSync(orphan, 'left by a crash');
    const fresh = attachmentPath(forge.ctx, randomUUID());
    mkdirSync(dirname(fresh), { recursive: true });
    writeFileSync(fresh, 'another process is recording me right now');
    const anHourAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
    utimesSync(orphan, anHourAgo, anHourAgo);
    utimesSync(attachmentPath(forge.ctx, kept.body.uuid), anHourAgo, anHourAgo);
    expect(await removeOrphanAttachmentFiles(forge.ctx)).toBe(1);
    const files = storedFiles(forge);
    expect(files).not.toContain(orphan);
    expect(files).toContain(fresh);
    expect(files).toContain(attachmentPath(forge.ctx, kept.body.uuid));
    expect(await (await fetch(kept.body.browser_download_url)).text()).toBe('kept');
  });
});

describe('release assets: [attachment] limits', () => {
  let forge: TestForge;
  let token: string;
  let repo: TestRepo;
  let releaseId: number;

  beforeAll(async () => {
    forge = await startTestForge({ config: { attachment: { max_size: 1, allowed_types: '.txt, image/*' } } });
    const owner = await forge.createUser();
    token = await forge.createToken(owner, ['write:repository', 'write:user']);
    repo = await createRepo(forge, token);
    releaseId = (await forge.request('POST', `${repo.path}/releases`, { token, body: { tag_name: 'v1' } }))
      .body.id;
  });
  afterAll(() => forge.close());

  const post = (body: FormData | Buffer, name?: string) =>
    fetch(`${forge.url}/api/v1${repo.path}/releases/${releaseId}/assets${name ? `?name=${name}` : ''}`, {
      method: 'POST',
      headers: {
        authorization: `token ${token}`,
        ...(Buffer.isBuffer(body) ? { 'content-type': 'application/octet-stream' } : {}),
      },
      body,
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as Json }));

  const assets = async () => (await forge.request('GET', `${repo.path}/releases/${releaseId}/assets`)).body;

  it('MAX_SIZE: one byte over is 413 (multipart and raw) and leaves nothing behind', async () => {
    const tooBig = Buffer.alloc(1024 * 1024 + 1, 'a');
    const raw = await post(tooBig, 'big.txt');
    expect(raw.status).toBe(413);
    expect(raw.body.message).toBe(`attachment exceeds limit ${1024 * 1024}`);
    expect((await post(multipart('attachment', 'big.txt', tooBig))).status).toBe(413);
    expect(storedFiles(forge)).toEqual([]);
    expect(await assets()).toEqual([]);
    const exact = await post(Buffer.alloc(1024 * 1024, 'a'), 'exact.txt');
    expect(exact.status).toBe(201);
    expect(exact.body.size).toBe(1024 * 1024);
  });

  it('ALLOWED_TYPES: extension or sniffed type must match; a refused upload is 400 and leaves nothing', async () => {
    const before = storedFiles(forge).length;
    const refused = await post(multipart('attachment', 'tool.bin', randomBytes(4000)));
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe(
      'This file cannot be uploaded or modified due to a forbidden file extension or type.',
    );
    expect(storedFiles(forge)).toHaveLength(before);
    expect((await post(multipart('attachment', 'notes.txt', Buffer.from('hello')))).status).toBe(201);
    // image/* matches the sniffed PNG whatever the name says.
    const image = await post(multipart('attachment', 'pixel.dat', PNG));
    expect(image.status).toBe(201);
    const rename = await forge.request(
      'PATCH',
      `${repo.path}/releases/${releaseId}/assets/${image.body.id}`,
      {
        token,
        body: { name: 'pixel.exe' },
      },
    );
    expect(rename.status).toBe(422);
    expect((await assets()).map((a: { name: string }) => a.name)).toEqual([
      'exact.txt',
      'notes.txt',
      'pixel.dat',
    ]);
  });
});
