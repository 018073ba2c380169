import { generateKeyPairSync } from 'node:crypto';
import sshpk from 'sshpk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestForge, type TestForge, type TestUser } from './harness.js';

/** A fresh ed25519 public key in authorized_keys form, with its SHA256 fingerprint. */
function newSshKey(comment = 'me@host') {
  const { publicKey } = generateKeyPairSync('ed25519');
  const key = sshpk.parseKey(publicKey.export({ type: 'spki', format: 'pem' }).toString(), 'pem');
  const [type, body] = key.toString('ssh').split(' ');
  return {
    line: `${type} ${body} ${comment}`,
    content: `${type} ${body}`,
    fingerprint: key.fingerprint('sha256').toString(),
  };
}

describe('user SSH keys', () => {
  let forge: TestForge;
  let alice: TestUser;
  let token: string;
  beforeAll(async () => {
    forge = await startTestForge();
    alice = await forge.createUser();
    token = await forge.createToken(alice, ['write:user']);
  });
  afterAll(() => forge.close());

  it('POST /user/keys stores the key with its SHA256 fingerprint and answers 201', async () => {
    const key = newSshKey();
    const res = await forge.request('POST', '/user/keys', {
      token,
      body: { title: 'laptop', key: key.line },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      key: key.content,
      url: `${forge.appUrl}api/v1/user/keys/${res.body.id}`,
      title: 'laptop',
      fingerprint: key.fingerprint,
      key_type: 'user',
      user: { login: alice.username },
    });
    expect(key.fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    const list = await forge.request('GET', '/user/keys', { token });
    expect(list.body.map((k: { id: number }) => k.id)).toEqual([res.body.id]);
    expect(list.headers.get('x-total-count')).toBe('1');
    const byFingerprint = await forge.request(
      'GET',
      `/user/keys?fingerprint=${encodeURIComponent(key.fingerprint)}`,
      { token },
    );
    expect(byFingerprint.body).toHaveLength(1);
    const one = await forge.request('GET', `/user/keys/${res.body.id}`, { token });
    expect(one.body.fingerprint).toBe(key.fingerprint);
  });

  it('rejects invalid keys, reused keys and reused titles with 422', async () => {
    const invalid = await forge.request('POST', '/user/keys', {
      token,
      body: { title: 'bad', key: 'ssh-rsa notbase64!!' },
    });
    expect(invalid.status).toBe(422);
    expect(invalid.body.message).toMatch(/^Invalid key content: /);
    const key = newSshKey();
    expect(
      (await forge.request('POST', '/user/keys', { token, body: { title: 'k1', key: key.line } })).status,
    ).toBe(201);
    const reused = await forge.request('POST', '/user/keys', { token, body: { title: 'k2', key: key.line } });
    expect(reused.status).toBe(422);
    expect(reused.body.message).toBe('Key content has been used as non-deploy key');
    const title = await forge.request('POST', '/user/keys', {
      token,
      body: { title: 'k1', key: newSshKey().line },
    });
    expect(title.body.message).toBe('Key title has been used');
    const bob = await forge.createUser();
    const bobToken = await forge.createToken(bob, ['write:user']);
    const otherUser = await forge.request('POST', '/user/keys', {
      token: bobToken,
      body: { title: 'x', key: key.line },
    });
    expect(otherUser.status).toBe(422);
  });

  it('DELETE /user/keys/{id}: 204 for the owner, 403 for others, 404 when unknown', async () => {
    const created = await forge.request('POST', '/user/keys', {
      token,
      body: { title: 'temp', key: newSshKey().line },
    });
    const bob = await forge.createUser();
    const bobToken = await forge.createToken(bob, ['write:user']);
    const denied = await forge.request('DELETE', `/user/keys/${created.body.id}`, { token: bobToken });
    expect(denied.status).toBe(403);
    expect(denied.body.message).toBe('You do not have access to this key');
    expect((await forge.request('DELETE', `/user/keys/${created.body.id}`, { token })).status).toBe(204);
    expect((await forge.request('DELETE', `/user/keys/${created.body.id}`, { token })).status).toBe(404);
  });
});
