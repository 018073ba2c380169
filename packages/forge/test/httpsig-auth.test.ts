// HTTP-signature authentication end to end: keys from ssh-keygen registered through the API, requests
// signed by a client over real HTTP against the admin-only `GET /admin/users`.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestForge, type TestForge, type TestUser } from './harness.js';
import {
  digestHeader,
  generateKey,
  issueCertificate,
  type KeyKind,
  type SignOptions,
  signatureHeader,
  type TestKey,
  unixNow,
} from './ssh-signing.js';

let dir: string;
let forge: TestForge;
let alice: TestUser;
let ca: TestKey;
let untrustedCa: TestKey;
const adminKeys: Partial<Record<KeyKind, TestKey>> = {};
let aliceKey: TestKey;
let strayKey: TestKey;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'forge-httpsig-e2e-'));
  ca = await generateKey(dir, 'ed25519');
  untrustedCa = await generateKey(dir, 'ed25519');
  forge = await startTestForge({ config: { server: { ssh_trusted_user_ca_keys: [ca.publicLine] } } });
  alice = await forge.createUser();
  const aliceToken = await forge.createToken(alice, ['write:user']);
  for (const kind of ['ed25519', 'rsa', 'ecdsa'] as const) {
    const key = await generateKey(dir, kind);
    const added = await forge.request('POST', '/user/keys', {
      token: forge.admin.token,
      body: { title: `admin-${kind}`, key: key.publicLine },
    });
    expect(added.status, added.text).toBe(201);
    adminKeys[kind] = key;
  }
  aliceKey = await generateKey(dir, 'ed25519');
  const added = await forge.request('POST', '/user/keys', {
    token: aliceToken,
    body: { title: 'alice', key: aliceKey.publicLine },
  });
  expect(added.status, added.text).toBe(201);
  strayKey = await generateKey(dir, 'ed25519');
}, 60_000);

afterAll(async () => {
  await forge?.close();
  await rm(dir, { recursive: true, force: true });
});

interface SignedRequest {
  method?: string;
  path?: string;
  key: TestKey;
  keyId?: string;
  body?: string;
  certificate?: string;
  sign?: Partial<SignOptions>;
  /** Sent instead of the signed path (a tampered request). */
  sentPath?: string;
  /** Sent instead of the signed body (a tampered request). */
  sentBody?: string;
  /** Extra headers sent (and available for signing). */
  headers?: Record<string, string>;
  /** Appended to the Signature header's parameters as written. */
  rawParams?: string;
}

/** Sends a request signed like Gitea's SDK does: hs2019 over (request-target) (created) (expires). */
function signedRequest(options: SignedRequest) {
  const method = options.method ?? 'GET';
  const path = `/api/v1${options.path ?? '/admin/users?limit=50'}`;
  const headers: Record<string, string> = { ...options.headers };
  const signed = ['(request-target)', '(created)', '(expires)'];
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    headers.digest = digestHeader(options.body);
    signed.push('digest');
  }
  if (options.certificate !== undefined) {
    headers['x-ssh-certificate'] = options.certificate;
    signed.push('x-ssh-certificate');
  }
  const now = unixNow();
  headers.signature = signatureHeader({
    method,
    target: path,
    headers,
    key: options.key,
    keyId: options.keyId ?? options.key.fingerprint,
    algorithm: 'hs2019',
    signed,
    created: now,
    expires: now + 10,
    ...options.sign,
  });
  if (options.rawParams) headers.signature += `,${options.rawParams}`;
  return forge.request(method, options.sentPath ?? path, {
    headers,
    body: options.sentBody ?? options.body,
  });
}

const rejected = (reason: string) => ({
  message: `invalid HTTP signature: ${reason}`,
  url: `${forge.appUrl}api/swagger`,
});

describe('public-key mode', () => {
  it.each(['ed25519', 'rsa', 'ecdsa'] as const)(
    'a %s key signs as its owner with full access',
    async (kind) => {
      const response = await signedRequest({ key: adminKeys[kind]! });
      expect(response.status, response.text).toBe(200);
      expect(response.body.map((user: { login: string }) => user.login)).toContain(alice.username);
    },
  );

  it('rsa-sha256 as the declared algorithm works too', async () => {
    const response = await signedRequest({
      key: adminKeys.rsa!,
      sign: { algorithm: 'rsa-sha256', hash: 'sha256' },
    });
    expect(response.status, response.text).toBe(200);
  });

  it('a signature is the signer: a non-admin key gets the admin guard, not full rights', async () => {
    const response = await signedRequest({ key: aliceKey });
    expect(response.status).toBe(403);
    expect(response.body.message).toBe('user should be the site admin');
    const me = await signedRequest({ key: aliceKey, path: '/user' });
    expect(me.status).toBe(200);
    expect(me.body.login).toBe(alice.username);
  });

  it('a signed body with a matching digest is accepted (a write with no token scope involved)', async () => {
    const username = `signed${unixNow()}`;
    const body = JSON.stringify({
      username,
      email: `${username}@example.com`,
      password: 'pw-long-enough-1',
      must_change_password: false,
    });
    const response = await signedRequest({
      method: 'POST',
      path: '/admin/users',
      key: adminKeys.ed25519!,
      body,
    });
    expect(response.status, response.text).toBe(201);
    expect(response.body.login).toBe(username);
  });

  it('a tampered body fails the digest and changes nothing', async () => {
    const username = `tampered${unixNow()}`;
    const body = JSON.stringify({ username, email: `${username}@example.com`, password: 'pw-long-enough-1' });
    const other = JSON.stringify({
      username,
      email: `${username}@example.com`,
      password: 'pw-long-enough-2',
    });
    const response = await signedRequest({
      method: 'POST',
      path: '/admin/users',
      key: adminKeys.ed25519!,
      body,
      sentBody: other,
    });
    expect(response.status).toBe(401);
    expect(response.body).toEqual(rejected('Digest does not match the request body'));
    const lookup = await forge.request('GET', `/users/${username}`, { token: forge.admin.token });
    expect(lookup.status).toBe(404);
  });

  it('a tampered request target answers 401 with the reason', async () => {
    const response = await signedRequest({
      key: adminKeys.ed25519!,
      sentPath: '/api/v1/admin/users?limit=49',
    });
    expect(response.status).toBe(401);
    expect(response.body).toEqual(rejected('signature does not verify'));
  });

  it('a signature by another key than keyId names answers 401', async () => {
    const response = await signedRequest({ key: strayKey, keyId: adminKeys.ed25519!.fingerprint });
    expect(response.status).toBe(401);
    expect(response.body).toEqual(rejected('signature does not verify'));
  });

  it('an unregistered key answers 401', async () => {
    const response = await signedRequest({ key: strayKey });
    expect(response.status).toBe(401);
    expect(response.body).toEqual(rejected('keyId is not the fingerprint of a registered key'));
  });

  it('an expired signature answers 401', async () => {
    const now = unixNow();
    const response = await signedRequest({
      key: adminKeys.ed25519!,
      sign: { created: now - 900, expires: now - 800 },
    });
    expect(response.status).toBe(401);
    expect(response.body.message).toMatch(
      /^invalid HTTP signature: invalid Signature header: Request expired/,
    );
  });

  describe('validity window: created and expires, as pseudo-headers and as bare parameters', () => {
    const asUser = (sign: Partial<SignOptions>) =>
      signedRequest({ key: adminKeys.ed25519!, path: '/user', sign });
    const bad = (response: { status: number; body: { message: string; url: string } }) => {
      expect(response.status).toBe(401);
      expect(Object.keys(response.body)).toEqual(['message', 'url']);
      expect(response.body.url).toBe(`${forge.appUrl}api/swagger`);
      return response.body.message;
    };

    it('inside the window the signature authenticates (GET /user → 200)', async () => {
      const now = unixNow();
      const response = await asUser({ created: now - 5, expires: now + 10 });
      expect(response.status, response.text).toBe(200);
      expect(response.body.login).toBe(forge.admin.username);
    });

    // 290 s, not 300: http-signature's own check (expires + 300 s of clock skew) would answer first,
    // with its own message, whenever a second ticks between signing and verifying.
    it('(expires) signed, about 5 minutes in the past → 401', async () => {
      const now = unixNow();
      const message = bad(await asUser({ created: now - 300, expires: now - 290 }));
      expect(message).toMatch(/^invalid HTTP signature: signature expired 29\ds ago$/);
    });

    it('expires sent as a parameter only (not signed), about 5 minutes in the past → 401', async () => {
      const now = unixNow();
      const response = await asUser({
        created: now - 300,
        expires: now - 290,
        signed: ['(request-target)', '(created)'],
      });
      expect(bad(response)).toMatch(/^invalid HTTP signature: signature expired 29\ds ago$/);
    });

    it('expires 45 s in the past (beyond the 30 s skew) → 401', async () => {
      const now = unixNow();
      expect(bad(await asUser({ created: now - 60, expires: now - 45 }))).toMatch(/signature expired/);
    });

    it('(created) signed, 2 minutes in the future → 401', async () => {
      const now = unixNow();
      const message = bad(await asUser({ created: now + 120, expires: now + 130 }));
      expect(message).toMatch(/^invalid HTTP signature: signature created 1[12]\ds in the future$/);
    });

    it('created sent as a parameter only (a Date header signed instead), 2 minutes in the future → 401', async () => {
      const now = unixNow();
      const date = new Date().toUTCString();
      const response = await signedRequest({
        key: adminKeys.ed25519!,
        path: '/user',
        headers: { date },
        sign: { created: now + 120, expires: undefined, signed: ['(request-target)', 'date'] },
      });
      expect(bad(response)).toMatch(/signature created 1[12]\ds in the future/);
    });

    it('a created or expires that is not a unix timestamp → 401', async () => {
      const response = await signedRequest({
        key: adminKeys.ed25519!,
        path: '/user',
        sign: { expires: undefined, signed: ['(request-target)', '(created)'] },
        rawParams: 'expires="soon"',
      });
      expect(bad(response)).toBe('invalid HTTP signature: the expires parameter is not a unix timestamp');
    });
  });

  it('a valid token wins over a bad signature (tokens come first in the chain)', async () => {
    const response = await forge.request('GET', '/admin/users', {
      token: forge.admin.token,
      headers: { signature: 'keyId="x",algorithm="hs2019",headers="(request-target)",signature="AAAA"' },
    });
    expect(response.status).toBe(200);
  });
});

describe('certificate mode and principals', () => {
  let aliceToken: string;

  beforeAll(async () => {
    aliceToken = await forge.createToken(alice, ['write:user']);
    const own = await forge.request('POST', '/user/principals', {
      token: aliceToken,
      body: { principal: alice.username },
    });
    expect(own.status, own.text).toBe(201);
    const forAdmin = await forge.request('POST', `/admin/users/${forge.admin.username}/principals`, {
      token: forge.admin.token,
      body: { principal: 'ops-admins', title: 'operations' },
    });
    expect(forAdmin.status, forAdmin.text).toBe(201);
  });

  async function certificateFor(principals: string[], options: { ca?: TestKey; validity?: string } = {}) {
    const key = await generateKey(dir, 'ed25519');
    const certificate = await issueCertificate(options.ca ?? ca, key, {
      principals,
      validity: options.validity,
    });
    return { key, certificate };
  }

  it('a certificate for a registered principal signs as its user (keyId is not used)', async () => {
    const { key, certificate } = await certificateFor(['ops-admins']);
    const response = await signedRequest({ key, keyId: 'gitea', certificate });
    expect(response.status, response.text).toBe(200);
    const me = await signedRequest({ key, keyId: 'gitea', certificate, path: '/user' });
    expect(me.body.login).toBe(forge.admin.username);
  });

  it('an RSA certificate works as well', async () => {
    const key = await generateKey(dir, 'rsa');
    const certificate = await issueCertificate(ca, key, { principals: [alice.username] });
    const me = await signedRequest({ key, keyId: 'gitea', certificate, path: '/user' });
    expect(me.status, me.text).toBe(200);
    expect(me.body.login).toBe(alice.username);
  });

  it('an expired certificate answers 401', async () => {
    const { key, certificate } = await certificateFor(['ops-admins'], { validity: '20200101:20200102' });
    const response = await signedRequest({ key, keyId: 'gitea', certificate });
    expect(response.status).toBe(401);
    expect(response.body).toEqual(rejected('certificate has expired'));
  });

  it('a certificate from an untrusted CA answers 401', async () => {
    const { key, certificate } = await certificateFor(['ops-admins'], { ca: untrustedCa });
    const response = await signedRequest({ key, keyId: 'gitea', certificate });
    expect(response.status).toBe(401);
    expect(response.body).toEqual(rejected('certificate is not signed by a trusted user CA'));
  });

  it('a certificate whose principal nobody registered answers 401', async () => {
    const { key, certificate } = await certificateFor(['nobody-registered-this']);
    const response = await signedRequest({ key, keyId: 'gitea', certificate });
    expect(response.status).toBe(401);
    expect(response.body).toEqual(rejected('no principal of the certificate is registered'));
  });

  it('a user may claim only their own name or e-mail as a principal', async () => {
    const response = await forge.request('POST', '/user/principals', {
      token: aliceToken,
      body: { principal: 'ops-admins-2' },
    });
    expect(response.status).toBe(403);
    expect(response.body.message).toBe('a principal must be your user name or e-mail address');
    const byEmail = await forge.request('POST', '/user/principals', {
      token: aliceToken,
      body: { principal: alice.email },
    });
    expect(byEmail.status, byEmail.text).toBe(201);
    expect(byEmail.body).toMatchObject({ principal: alice.email, title: alice.email, key_type: 'principal' });
  });

  it('a principal belongs to one user only', async () => {
    const response = await forge.request('POST', `/admin/users/${forge.admin.username}/principals`, {
      token: forge.admin.token,
      body: { principal: alice.username },
    });
    expect(response.status).toBe(422);
    expect(response.body.message).toBe('principal has been used');
  });

  it('principals are listed and deleted; a deleted principal no longer signs', async () => {
    const listed = await forge.request('GET', '/user/principals', { token: aliceToken });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('x-total-count')).toBe('2');
    const names = listed.body.map((row: { principal: string }) => row.principal);
    expect(names).toEqual([alice.username, alice.email]);
    // Principals are not SSH keys: GET /user/keys lists only the key alice registered.
    const keys = await forge.request('GET', '/user/keys', { token: aliceToken });
    expect(keys.body.map((key: { title: string }) => key.title)).toEqual(['alice']);

    const { key, certificate } = await certificateFor([alice.email]);
    expect((await signedRequest({ key, keyId: 'gitea', certificate, path: '/user' })).status).toBe(200);
    const id = listed.body[1].id;
    const other = await forge.createUser();
    const otherToken = await forge.createToken(other, ['write:user']);
    expect((await forge.request('DELETE', `/user/principals/${id}`, { token: otherToken })).status).toBe(403);
    expect((await forge.request('DELETE', `/user/principals/${id}`, { token: aliceToken })).status).toBe(204);
    const after = await signedRequest({ key, keyId: 'gitea', certificate, path: '/user' });
    expect(after.status).toBe(401);
    expect((await forge.request('DELETE', `/user/principals/${id}`, { token: aliceToken })).status).toBe(404);
  });
});
