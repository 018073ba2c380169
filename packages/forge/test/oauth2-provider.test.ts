import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPair, SignJWT } from 'jose';
import * as client from 'openid-client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSigningKey } from '../src/oauth/signing-key.js';
import { signGrantToken, TokenKind } from '../src/oauth/tokens.js';
import { launchChromium } from './browser.js';
import { startTestForge, type TestForge, type TestUser } from './harness.js';

interface App {
  id: number;
  client_id: string;
  client_secret: string;
}

describe('OAuth2 provider (authorization code + PKCE, refresh, scopes, revocation)', () => {
  let forge: TestForge;
  let browser: Browser;
  let alice: TestUser;
  let aliceToken: string;
  let unauthorized: { message: string; url: string };
  /** The test client's redirect URI, served by a real listener as a client application would. */
  let callbackServer: Server;
  let CALLBACK: string;

  beforeAll(async () => {
    callbackServer = createServer((_request, response) => response.end('callback reached'));
    await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
    CALLBACK = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}/callback`;
    browser = await launchChromium();
    forge = await startTestForge();
    alice = await forge.createUser({ fullName: 'Alice Example' });
    aliceToken = await forge.createToken(alice, ['write:user']);
    unauthorized = { message: 'user does not exist [uid: 0, name: ]', url: `${forge.appUrl}api/swagger` };
  });
  afterAll(async () => {
    await browser?.close();
    await forge?.close();
    callbackServer?.close();
  });

  const registerApp = async (confidential: boolean, redirectUris = [CALLBACK]): Promise<App> => {
    const created = await forge.request('POST', '/user/applications/oauth2', {
      token: aliceToken,
      body: {
        name: `app-${confidential ? 'web' : 'cli'}`,
        redirect_uris: redirectUris,
        confidential_client: confidential,
      },
    });
    expect(created.status).toBe(201);
    return created.body;
  };

  const discover = (app: App, auth: client.ClientAuth) =>
    client.discovery(new URL(forge.appUrl), app.client_id, undefined, auth, {
      execute: [client.allowInsecureRequests],
    });

  /** A fresh browser context: its own cookies, so its own forge session. */
  const newBrowserContext = async (): Promise<{ context: BrowserContext; page: Page }> => {
    const context = await browser.newContext();
    return { context, page: await context.newPage() };
  };

  /** The browser's request to the client's redirect URI (where the code arrives). */
  const reachesCallback = (page: Page) =>
    page.waitForRequest((request) => request.url().startsWith(`${CALLBACK}?`), { timeout: 30_000 });

  /** Signs in on forge's page when it is shown. */
  const signInIfAsked = async (page: Page, user: TestUser) => {
    if ((await page.title()).startsWith('Sign in')) {
      await page.fill('input[name=user_name]', user.username);
      await page.fill('input[name=password]', user.password);
      await Promise.all([page.waitForLoadState(), page.click('#sign-in')]);
    }
  };

  const api = (accessToken: string, path: string, method = 'GET', body?: unknown, scheme = 'Bearer') =>
    forge.request(method, path, { headers: { authorization: `${scheme} ${accessToken}` }, body });

  describe('public client with PKCE, driven by openid-client and clicked in chromium', () => {
    let app: App;
    let config: client.Configuration;
    let tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers;

    beforeAll(async () => {
      app = await registerApp(false);
      config = await discover(app, client.None());
    });

    it('discovery and JWKS describe the endpoints at Gitea’s paths', async () => {
      const metadata = config.serverMetadata();
      const base = forge.appUrl.replace(/\/$/, '');
      expect(metadata).toMatchObject({
        issuer: forge.appUrl,
        authorization_endpoint: `${base}/login/oauth/authorize`,
        token_endpoint: `${base}/login/oauth/access_token`,
        jwks_uri: `${base}/login/oauth/keys`,
        userinfo_endpoint: `${base}/login/oauth/userinfo`,
        introspection_endpoint: `${base}/login/oauth/introspect`,
        code_challenge_methods_supported: ['S256'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
      });
      const jwks = (await fetch(`${base}/login/oauth/keys`).then((r) => r.json())) as {
        keys: Array<Record<string, unknown>>;
      };
      expect(jwks.keys).toHaveLength(1);
      expect(jwks.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
      expect(jwks.keys[0]?.d).toBeUndefined();
    });

    it('signs in, consents and exchanges the code with its PKCE verifier', async () => {
      const verifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const nonce = client.randomNonce();
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: CALLBACK,
        scope: 'openid profile email read:user',
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      });
      const { context, page } = await newBrowserContext();
      let callback: URL;
      try {
        await page.goto(url.href);
        expect(await page.title()).toBe('Sign in - forge');
        // A wrong password shows the form again with the error.
        await page.fill('input[name=user_name]', alice.username);
        await page.fill('input[name=password]', 'wrong');
        await Promise.all([page.waitForLoadState(), page.click('#sign-in')]);
        expect(await page.textContent('.error')).toBe('Username or password is incorrect.');
        await signInIfAsked(page, alice);
        expect(await page.title()).toBe('Authorize application - forge');
        const text = await page.textContent('main');
        expect(text).toContain(`Signed in as ${alice.username}`);
        expect(text).toContain('app-cli');
        expect(text).toContain('read:user');
        expect(text).toContain(CALLBACK);
        const cookies = await context.cookies(forge.url);
        expect(cookies.find((c) => c.name === 'forge_session')).toMatchObject({
          httpOnly: true,
          sameSite: 'Lax',
        });
        const [request] = await Promise.all([reachesCallback(page), page.click('#authorize')]);
        callback = new URL(request.url());
      } finally {
        await context.close();
      }
      expect(callback.searchParams.get('state')).toBe(state);

      tokens = await client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: verifier,
        expectedState: state,
        expectedNonce: nonce,
      });
      expect(tokens.token_type.toLowerCase()).toBe('bearer');
      expect(tokens.expires_in).toBe(3600);
      expect(tokens.scope).toBe('openid profile email read:user');
      const claims = tokens.claims()!;
      expect(claims).toMatchObject({
        iss: forge.appUrl,
        aud: app.client_id,
        sub: String(alice.id),
        nonce,
        name: 'Alice Example',
        preferred_username: alice.username,
        email: alice.email,
        email_verified: true,
      });

      const info = await client.fetchUserInfo(config, tokens.access_token, String(alice.id));
      expect(info).toMatchObject({
        sub: String(alice.id),
        name: 'Alice Example',
        preferred_username: alice.username,
        email: alice.email,
        groups: [],
      });
    });

    it('the access token authenticates the API as Bearer and as token', async () => {
      const bearer = await api(tokens.access_token, '/user');
      expect(bearer.status).toBe(200);
      expect(bearer.body.login).toBe(alice.username);
      const token = await api(tokens.access_token, '/user', 'GET', undefined, 'token');
      expect(token.status).toBe(200);
      expect(token.body.id).toBe(alice.id);
    });

    it('its scope is the grant’s API scopes, enforced like a personal token’s', async () => {
      expect((await api(tokens.access_token, '/user/applications/oauth2')).status).toBe(200);
      const write = await api(tokens.access_token, '/user/applications/oauth2', 'POST', {
        name: 'x',
        redirect_uris: ['https://x.example.com/cb'],
      });
      expect(write.status).toBe(403);
      expect(write.body).toEqual({
        message:
          'token does not have at least one of required scope(s), required=[write:user], token scope=read:user',
        url: `${forge.appUrl}api/swagger`,
      });
      const repos = await api(tokens.access_token, `/repos/${alice.username}/none/releases`);
      expect(repos.status).toBe(403);
      expect(repos.body.message).toContain('required=[read:repository]');
    });

    it('a session cookie alone never authenticates the API', async () => {
      const response = await forge.request('GET', '/user', { headers: { cookie: 'forge_session=x' } });
      expect(response.status).toBe(401);
    });

    it('refresh gives a new pair; the used refresh token is single use, and replaying it revokes the grant', async () => {
      const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
      expect(refreshed.access_token).not.toBe(tokens.access_token);
      expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
      expect((await api(refreshed.access_token, '/user')).status).toBe(200);

      const replay = await fetch(`${forge.url}/login/oauth/access_token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token!,
          client_id: app.client_id,
        }),
      });
      expect(replay.status).toBe(400);
      expect(await replay.json()).toEqual({
        error: 'invalid_grant',
        error_description: 'Invalid grant: refresh token is invalid',
      });
      // The replay revoked the grant: every token issued under it is dead, the newest included.
      const after = await api(refreshed.access_token, '/user');
      expect(after.status).toBe(401);
      expect(after.body).toEqual(unauthorized);
      await expect(client.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({
        error: 'invalid_grant',
      });
    });

    it('an authorization request without PKCE is refused for a public client', async () => {
      const url = new URL(`${forge.url}/login/oauth/authorize`);
      url.search = new URLSearchParams({
        client_id: app.client_id,
        redirect_uri: CALLBACK,
        response_type: 'code',
        state: 'st-1',
      }).toString();
      const response = await fetch(url, { redirect: 'manual' });
      expect(response.status).toBe(303);
      const location = new URL(response.headers.get('location')!);
      expect(`${location.origin}${location.pathname}`).toBe(CALLBACK);
      expect(Object.fromEntries(location.searchParams)).toEqual({
        error: 'invalid_request',
        error_description: 'PKCE is required for public clients',
        state: 'st-1',
      });
      const plain = new URL(url);
      plain.searchParams.set('code_challenge', 'x'.repeat(43));
      plain.searchParams.set('code_challenge_method', 'plain');
      const refused = await fetch(plain, { redirect: 'manual' });
      expect(new URL(refused.headers.get('location')!).searchParams.get('error_description')).toBe(
        'unsupported code challenge method',
      );
    });

    it('unknown clients and unregistered redirect URIs get an error page, not a redirect', async () => {
      const unknown = await fetch(
        `${forge.url}/login/oauth/authorize?client_id=00000000-0000-0000-0000-000000000000&redirect_uri=${encodeURIComponent(CALLBACK)}&response_type=code`,
        { redirect: 'manual' },
      );
      expect(unknown.status).toBe(400);
      expect(unknown.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(await unknown.text()).toContain('Client ID not registered');
      const evil = await fetch(
        `${forge.url}/login/oauth/authorize?client_id=${app.client_id}&redirect_uri=${encodeURIComponent('https://evil.example.com/cb')}&response_type=code`,
        { redirect: 'manual' },
      );
      expect(evil.status).toBe(400);
      expect(await evil.text()).toContain('Unregistered Redirect URI');
    });
  });

  describe('confidential client', () => {
    let app: App;
    let config: client.Configuration;
    let context: BrowserContext;
    let page: Page;

    beforeAll(async () => {
      app = await registerApp(true);
      config = await discover(app, client.ClientSecretBasic(app.client_secret));
      ({ context, page } = await newBrowserContext());
    });
    afterAll(() => context?.close());

    /** Runs the browser part of one authorization; returns the callback URL. */
    const authorize = async (scope: string, verifier: string, consent: boolean) => {
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: CALLBACK,
        scope,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state: 'st',
      });
      if (!consent) {
        // An application the user already authorized is sent straight back with a code.
        const [request] = await Promise.all([reachesCallback(page), page.goto(url.href)]);
        return new URL(request.url());
      }
      await page.goto(url.href);
      await signInIfAsked(page, alice);
      expect(await page.title()).toBe('Authorize application - forge');
      const [request] = await Promise.all([reachesCallback(page), page.click('#authorize')]);
      return new URL(request.url());
    };

    it('authenticates with its secret (Basic or body); an authorized app is not asked again', async () => {
      const verifier = client.randomPKCECodeVerifier();
      const callback = await authorize('read:user', verifier, true);
      const tokens = await client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: verifier,
        expectedState: 'st',
      });
      expect(tokens.id_token).toBeUndefined();
      expect((await api(tokens.access_token, '/user')).status).toBe(200);

      // Second authorization: the grant exists and the client is confidential, so no consent page.
      const second = client.randomPKCECodeVerifier();
      const again = await authorize('read:user', second, false);
      const code = again.searchParams.get('code')!;
      const exchange = (secret: string, verifierValue = second) =>
        fetch(`${forge.url}/login/oauth/access_token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'authorization_code',
            code,
            redirect_uri: CALLBACK,
            client_id: app.client_id,
            client_secret: secret,
            code_verifier: verifierValue,
          }),
        });
      const wrongSecret = await exchange('gto_wrong');
      expect(wrongSecret.status).toBe(400);
      expect(((await wrongSecret.json()) as { error: string }).error).toBe('invalid_client');
      const ok = await exchange(app.client_secret);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('cache-control')).toBe('no-store');
      const body = (await ok.json()) as Record<string, unknown>;
      expect(Object.keys(body).sort()).toEqual([
        'access_token',
        'expires_in',
        'refresh_token',
        'scope',
        'token_type',
      ]);
      // A code is single use.
      const replay = await exchange(app.client_secret);
      expect(replay.status).toBe(400);
      expect(((await replay.json()) as { error: string }).error).toBe('invalid_grant');
    });

    it('a wrong PKCE verifier consumes the code and gets invalid_grant', async () => {
      const verifier = client.randomPKCECodeVerifier();
      const callback = await authorize('read:user', verifier, false);
      await expect(
        client.authorizationCodeGrant(config, callback, {
          pkceCodeVerifier: client.randomPKCECodeVerifier(),
          expectedState: 'st',
        }),
      ).rejects.toMatchObject({
        error: 'invalid_grant',
        error_description: 'Invalid grant: code verifier is invalid',
      });
      await expect(
        client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 'st' }),
      ).rejects.toMatchObject({
        error: 'invalid_grant',
        error_description: 'Invalid grant: authorization code is invalid',
      });
    });

    it('introspection answers the client its tokens were issued to', async () => {
      const verifier = client.randomPKCECodeVerifier();
      const callback = await authorize('read:user', verifier, false);
      const tokens = await client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: verifier,
        expectedState: 'st',
      });
      const active = await client.tokenIntrospection(config, tokens.access_token);
      expect(active).toMatchObject({
        active: true,
        scope: 'read:user',
        username: alice.username,
        sub: String(alice.id),
        iss: forge.appUrl,
      });
      expect((await client.tokenIntrospection(config, 'not-a-token')).active).toBe(false);
      const anonymous = await fetch(`${forge.url}/login/oauth/introspect`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: tokens.access_token }),
      });
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toBe('Basic realm="forge OAuth2"');
    });

    it('deleting the application revokes its tokens at once (401 like any bad token)', async () => {
      const verifier = client.randomPKCECodeVerifier();
      const callback = await authorize('read:user', verifier, false);
      const tokens = await client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: verifier,
        expectedState: 'st',
      });
      expect((await api(tokens.access_token, '/user')).status).toBe(200);
      const deleted = await forge.request('DELETE', `/user/applications/oauth2/${app.id}`, {
        token: aliceToken,
      });
      expect(deleted.status).toBe(204);
      const after = await api(tokens.access_token, '/user');
      expect(after.status).toBe(401);
      expect(after.body).toEqual(unauthorized);
      // A public route too: a bad token is never downgraded to anonymous.
      expect((await api(tokens.access_token, '/version')).status).toBe(401);
      const refresh = await fetch(`${forge.url}/login/oauth/access_token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token!,
          client_id: app.client_id,
          client_secret: app.client_secret,
        }),
      });
      expect(refresh.status).toBe(400);
      expect(((await refresh.json()) as { error: string }).error).toBe('invalid_client');
    });
  });

  describe('tokens that are not ours', () => {
    it('a wrongly signed, expired, refresh-kind or algorithm-swapped token is 401', async () => {
      // A live grant, so that only the token itself is wrong.
      const app = await registerApp(true);
      const grant = await forge.ctx.db
        .insertInto('oauth2_grant')
        .values({
          user_id: alice.id,
          application_id: app.id,
          scope: 'read:user',
          nonce: '',
          created_unix: 0,
          updated_unix: 0,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const key = await loadSigningKey(forge.ctx);
      const now = Math.floor(Date.now() / 1000);
      const good = await signGrantToken(key, TokenKind.Access, grant.id, now + 600);
      expect((await api(good, '/user')).status).toBe(200);

      const { privateKey: otherKey } = await generateKeyPair('RS256');
      const forged = await new SignJWT({ gnt: grant.id, tt: 0 })
        .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' })
        .setExpirationTime(now + 600)
        .sign(otherKey);
      const expired = await signGrantToken(key, TokenKind.Access, grant.id, now - 60);
      const refreshKind = await signGrantToken(key, TokenKind.Refresh, grant.id, now + 600, 1);
      const [header, payload] = good.split('.');
      const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
      const tampered = `${header}.${Buffer.from(JSON.stringify({ gnt: grant.id + 1, tt: 0, exp: now + 600 })).toString('base64url')}.${good.split('.')[2]}`;
      for (const token of [forged, expired, refreshKind, unsigned, tampered]) {
        const response = await api(token, '/user');
        expect(response.status, token).toBe(401);
        expect(response.body).toEqual(unauthorized);
      }
      const userinfo = await fetch(`${forge.url}/login/oauth/userinfo`, {
        headers: { authorization: `Bearer ${forged}` },
      });
      expect(userinfo.status).toBe(401);
      expect(await userinfo.text()).toBe('no valid authorization');
    });

    it('a personal access token is not accepted by userinfo (OAuth2 tokens only)', async () => {
      const response = await fetch(`${forge.url}/login/oauth/userinfo`, {
        headers: { authorization: `token ${aliceToken}` },
      });
      expect(response.status).toBe(401);
    });
  });

  describe('forms are CSRF-protected', () => {
    it('a sign-in or consent post without the form’s token is refused and changes nothing', async () => {
      const signIn = await fetch(`${forge.url}/user/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ user_name: alice.username, password: alice.password }),
        redirect: 'manual',
      });
      expect(signIn.status).toBe(403);
      expect(signIn.headers.get('set-cookie') ?? '').not.toContain('forge_session');
      expect(signIn.headers.get('content-type')).toBe('text/html; charset=utf-8');

      const grant = await fetch(`${forge.url}/login/oauth/grant`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: '_csrf=forged' },
        body: new URLSearchParams({ _csrf: 'forged', granted: 'true' }),
        redirect: 'manual',
      });
      expect(grant.status).toBe(403);
    });

    it('pages forbid framing and load nothing from elsewhere', async () => {
      const page = await fetch(`${forge.url}/user/login`);
      expect(page.status).toBe(200);
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
      const html = await page.text();
      expect(html).not.toMatch(/https?:\/\//);
      expect(html).toContain('name="_csrf"');
    });
  });
});
