import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestForge, type TestForge } from './harness.js';

async function png(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { res, bytes, image: res.status === 200 ? PNG.sync.read(bytes) : null };
}

/** `avatar_url` answers a generated identicon PNG, sized by `?size=`, cacheable. */
describe('avatars', () => {
  let forge: TestForge;
  let alice: { avatar_url: string };
  let bob: { avatar_url: string };

  beforeAll(async () => {
    forge = await startTestForge();
    const a = await forge.createUser({ email: 'alice-avatar@example.com' });
    const b = await forge.createUser({ email: 'bob-avatar@example.com' });
    alice = (await forge.request('GET', `/users/${a.username}`)).body;
    bob = (await forge.request('GET', `/users/${b.username}`)).body;
  });
  afterAll(() => forge.close());

  it('a user avatar_url is a 256×256 PNG identicon, the same bytes every time, different per user', async () => {
    expect(alice.avatar_url).toMatch(new RegExp(`^${forge.appUrl}avatars/[0-9a-f]{32}$`));
    const first = await png(alice.avatar_url);
    expect(first.res.status).toBe(200);
    expect(first.res.headers.get('content-type')).toBe('image/png');
    expect([first.image?.width, first.image?.height]).toEqual([256, 256]);
    // White background and one foreground colour, as Gitea's identicons.
    const colours = new Set<string>();
    for (let p = 0; p < first.image!.data.length; p += 4) {
      colours.add(first.image!.data.subarray(p, p + 3).toString('hex'));
    }
    expect(colours.has('ffffff')).toBe(true);
    expect(colours.size).toBeLessThanOrEqual(2);
    const again = await png(alice.avatar_url);
    expect(again.bytes.equals(first.bytes)).toBe(true);
    const other = await png(bob.avatar_url);
    expect(other.bytes.equals(first.bytes)).toBe(false);
  });

  it('?size= is honoured within 16…512; anything else is the default', async () => {
    const sizeOf = async (query: string) => (await png(`${alice.avatar_url}${query}`)).image?.width;
    expect(await sizeOf('?size=64')).toBe(64);
    expect(await sizeOf('?size=100')).toBe(100);
    expect(await sizeOf('?size=2')).toBe(16);
    expect(await sizeOf('?size=999999')).toBe(512);
    expect(await sizeOf('?size=abc')).toBe(256);
    expect(await sizeOf('?size=-5')).toBe(256);
  });

  it('cacheable: a strong ETag per hash and size, public Cache-Control, 304 on If-None-Match', async () => {
    const first = await png(`${alice.avatar_url}?size=64`);
    const etag = first.res.headers.get('etag');
    expect(etag).toMatch(/^"[0-9a-f]{32}-64"$/);
    expect(first.res.headers.get('cache-control')).toBe('public, max-age=86400');
    const cached = await fetch(`${alice.avatar_url}?size=64`, { headers: { 'if-none-match': etag! } });
    expect(cached.status).toBe(304);
    expect((await png(`${alice.avatar_url}?size=65`)).res.headers.get('etag')).not.toBe(etag);
  });

  it('organizations and the Ghost user have avatars too; malformed hashes are 404', async () => {
    const org = await forge.createOrg(forge.admin.token, {});
    const orgBody = (await forge.request('GET', `/orgs/${org.name}`)).body;
    expect((await png(orgBody.avatar_url)).res.status).toBe(200);
    const ghost = (await forge.request('GET', '/users/search?uid=-1')).body.data[0];
    const ghostAvatar = await png(ghost.avatar_url);
    expect(ghostAvatar.res.status).toBe(200);
    expect(ghostAvatar.image?.width).toBe(256);
    expect((await fetch(`${forge.url}/avatars/not-a-hash`)).status).toBe(404);
    expect((await fetch(`${forge.url}/avatars/${'A'.repeat(32)}`)).status).toBe(404);
  });
});
