// The OAuth2 provider on two forge processes sharing one PostgreSQL database: one signing key, sessions,
// CSRF, codes, grants and revocation work whichever process a request reaches.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresDatabase, type TestDatabase } from '../test-database.js';
import { type ForgeProcess, spawnForge } from './forge-process.js';

let dataDir: string;
let database: TestDatabase;
let a: ForgeProcess;
let b: ForgeProcess;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'forge-oauth2-scale-out-'));
  database = await createPostgresDatabase();
  // Both start at once on an empty database: both try to create the signing key.
  [a, b] = await Promise.all([
    spawnForge({ dataDir, databaseUrl: database.url }),
    spawnForge({ dataDir, databaseUrl: database.url }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

/** A minimal browser: keeps cookies across requests to either process (same host, so shared cookies). */
class Browser {
  private cookies = new Map<string, string>();

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) {
      headers.set('cookie', [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '));
    }
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    return response;
  }

  /** Posts a page's form (its hidden fields plus `extra`) to `url`. */
  async submit(url: string, html: string, extra: Record<string, string>): Promise<Response> {
    const fields = Object.fromEntries(
      [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [
        m[1]!,
        m[2]!
          .replaceAll('&amp;', '&')
          .replaceAll('&quot;', '"')
          .replaceAll('&#39;', "'")
          .replaceAll('&lt;', '<')
          .replaceAll('&gt;', '>'),
      ]),
    );
    return this.fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...fields, ...extra }),
    });
  }
}

describe('OAuth2 on two processes', () => {
  it('keys, sign-in, consent, code, tokens and revocation are shared through the database', async () => {
    const password = /password: (\S+)/.exec([...a.printed, ...b.printed].join('\n'))?.[1];
    expect(password).toBeDefined();
    const basic = `Basic ${Buffer.from(`forge-admin:${password}`).toString('base64')}`;
    const created = await fetch(`${a.url}/api/v1/users/forge-admin/tokens`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'oauth', scopes: ['write:user'] }),
    });
    const token = ((await created.json()) as { sha1: string }).sha1;
    const callback = 'http://127.0.0.1:1/cb';
    const registered = await fetch(`${a.url}/api/v1/user/applications/oauth2`, {
      method: 'POST',
      headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'shared', redirect_uris: [callback] }),
    });
    expect(registered.status).toBe(201);
    const app = (await registered.json()) as { client_id: string; client_secret: string; id: number };

    // One key for both.
    const [keysA, keysB] = await Promise.all([
      fetch(`${a.url}/login/oauth/keys`).then((r) => r.json()),
      fetch(`${b.url}/login/oauth/keys`).then((r) => r.json()),
    ]);
    expect(keysA).toEqual(keysB);

    // Sign in on B.
    const browser = new Browser();
    const signInPage = await (await browser.fetch(`${b.url}/user/login`)).text();
    const signedIn = await browser.submit(`${b.url}/user/login`, signInPage, {
      user_name: 'forge-admin',
      password: password!,
    });
    expect(signedIn.status).toBe(303);

    // Authorize on A with B's session, consent posted to B with A's form.
    const verifier = client.randomPKCECodeVerifier();
    const authorize = new URL(`${a.url}/login/oauth/authorize`);
    authorize.search = new URLSearchParams({
      response_type: 'code',
      client_id: app.client_id,
      redirect_uri: callback,
      scope: 'read:user',
      state: 's1',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();
    const consent = await browser.fetch(authorize.href);
    expect(consent.status).toBe(200);
    const granted = await browser.submit(`${b.url}/login/oauth/grant`, await consent.text(), {
      granted: 'true',
    });
    expect(granted.status).toBe(303);
    const code = new URL(granted.headers.get('location')!).searchParams.get('code')!;

    // Exchange on B, use on both.
    const exchange = await fetch(`${b.url}/login/oauth/access_token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: callback,
        client_id: app.client_id,
        code_verifier: verifier,
      }),
    });
    expect(exchange.status).toBe(200);
    const tokens = (await exchange.json()) as { access_token: string; refresh_token: string };
    const me = (forge: ForgeProcess, accessToken: string) =>
      fetch(`${forge.url}/api/v1/user`, { headers: { authorization: `Bearer ${accessToken}` } }).then(
        (r) => r.status,
      );
    expect(await me(a, tokens.access_token)).toBe(200);
    expect(await me(b, tokens.access_token)).toBe(200);

    // Refresh on A; the new token works on B.
    const refresh = await fetch(`${a.url}/login/oauth/access_token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: app.client_id,
      }),
    });
    expect(refresh.status).toBe(200);
    const renewed = (await refresh.json()) as { access_token: string; refresh_token: string };
    expect(await me(b, renewed.access_token)).toBe(200);

    // Deleting the application on B revokes on A at once.
    const deleted = await fetch(`${b.url}/api/v1/user/applications/oauth2/${app.id}`, {
      method: 'DELETE',
      headers: { authorization: `token ${token}` },
    });
    expect(deleted.status).toBe(204);
    expect(await me(a, renewed.access_token)).toBe(401);
    expect(await me(b, tokens.access_token)).toBe(401);
  });
});
