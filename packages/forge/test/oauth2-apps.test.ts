import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestForge, type TestForge, type TestUser } from './harness.js';

// Gitea 1.25.3's published definitions, made strict: Gitea always emits every field, and nothing else.
const swagger = JSON.parse(
  readFileSync(new URL('./fixtures/gitea-oauth2-swagger.json', import.meta.url), 'utf8'),
) as { definitions: Record<string, { properties: Record<string, unknown> }> };
const strict = (name: string) => {
  const definition = swagger.definitions[name]!;
  return {
    type: 'object',
    properties: definition.properties,
    required: Object.keys(definition.properties),
    additionalProperties: false,
  };
};
const ajv = new Ajv({
  strict: false,
  formats: { 'date-time': /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/ },
});
const validApplication = ajv.compile(strict('OAuth2Application'));
const expectApplication = (body: unknown) => {
  expect(validApplication(body), JSON.stringify(validApplication.errors)).toBe(true);
};

describe('OAuth2 applications API (/user/applications/oauth2)', () => {
  let forge: TestForge;
  let alice: TestUser;
  let aliceToken: string;
  let bobToken: string;

  beforeAll(async () => {
    forge = await startTestForge();
    alice = await forge.createUser();
    const bob = await forge.createUser();
    aliceToken = await forge.createToken(alice, ['write:user']);
    bobToken = await forge.createToken(bob, ['write:user']);
  });
  afterAll(() => forge?.close());

  it('create returns 201 with the client secret once; only its hash is stored', async () => {
    const created = await forge.request('POST', '/user/applications/oauth2', {
      token: aliceToken,
      body: { name: 'ci', redirect_uris: ['https://ci.example.com/callback'], confidential_client: true },
    });
    expect(created.status).toBe(201);
    expectApplication(created.body);
    expect(created.body).toMatchObject({
      name: 'ci',
      confidential_client: true,
      skip_secondary_authorization: false,
      redirect_uris: ['https://ci.example.com/callback'],
    });
    expect(created.body.client_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(created.body.client_secret).toMatch(/^gto_[0-9a-f]{64}$/);

    const row = await forge.ctx.db
      .selectFrom('oauth2_application')
      .selectAll()
      .where('id', '=', created.body.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(created.body.client_secret);
    expect(JSON.stringify(row)).not.toContain(created.body.client_secret.slice(4));

    const read = await forge.request('GET', `/user/applications/oauth2/${created.body.id}`, {
      token: aliceToken,
    });
    expect(read.status).toBe(200);
    expectApplication(read.body);
    expect(read.body).toEqual({ ...created.body, client_secret: '' });
  });

  it('confidential_client absent means a public client (Go zero value)', async () => {
    const created = await forge.request('POST', '/user/applications/oauth2', {
      token: aliceToken,
      body: { name: 'cli', redirect_uris: ['http://127.0.0.1/callback', 'com.example.app:/cb'] },
    });
    expect(created.status).toBe(201);
    expect(created.body.confidential_client).toBe(false);
  });

  it('list shows the caller’s applications without secrets, with X-Total-Count', async () => {
    const list = await forge.request('GET', '/user/applications/oauth2?limit=50', { token: aliceToken });
    expect(list.status).toBe(200);
    expect(list.headers.get('x-total-count')).toBe(String(list.body.length));
    expect(list.body.length).toBeGreaterThanOrEqual(2);
    for (const app of list.body) {
      expectApplication(app);
      expect(app.client_secret).toBe('');
    }
    const bobs = await forge.request('GET', '/user/applications/oauth2', { token: bobToken });
    expect(bobs.status).toBe(200);
    expect(bobs.body).toEqual([]);
    expect(bobs.headers.get('x-total-count')).toBe('0');
  });

  it('PATCH replaces name, redirect URIs and kind and generates a new secret', async () => {
    const created = await forge.request('POST', '/user/applications/oauth2', {
      token: aliceToken,
      body: { name: 'old', redirect_uris: ['https://old.example.com/cb'], confidential_client: true },
    });
    const edited = await forge.request('PATCH', `/user/applications/oauth2/${created.body.id}`, {
      token: aliceToken,
      body: {
        name: 'new',
        redirect_uris: ['https://new.example.com/cb'],
        skip_secondary_authorization: true,
      },
    });
    expect(edited.status).toBe(200);
    expectApplication(edited.body);
    expect(edited.body).toMatchObject({
      id: created.body.id,
      client_id: created.body.client_id,
      name: 'new',
      redirect_uris: ['https://new.example.com/cb'],
      confidential_client: false,
      skip_secondary_authorization: true,
      created: created.body.created,
    });
    expect(edited.body.client_secret).toMatch(/^gto_/);
    expect(edited.body.client_secret).not.toBe(created.body.client_secret);
  });

  it('another user’s application is 404 for read, edit and delete; unknown ids are 404', async () => {
    const created = await forge.request('POST', '/user/applications/oauth2', {
      token: aliceToken,
      body: { name: 'mine', redirect_uris: ['https://mine.example.com/cb'] },
    });
    const id = created.body.id;
    const body = { name: 'stolen', redirect_uris: ['https://evil.example.com/cb'] };
    expect((await forge.request('GET', `/user/applications/oauth2/${id}`, { token: bobToken })).status).toBe(
      404,
    );
    expect(
      (await forge.request('PATCH', `/user/applications/oauth2/${id}`, { token: bobToken, body })).status,
    ).toBe(404);
    expect(
      (await forge.request('DELETE', `/user/applications/oauth2/${id}`, { token: bobToken })).status,
    ).toBe(404);
    const missing = await forge.request('GET', '/user/applications/oauth2/999999', { token: aliceToken });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({
      errors: null,
      message: "The target couldn't be found.",
      url: `${forge.appUrl}api/swagger`,
    });
    expect((await forge.request('GET', '/user/applications/oauth2/abc', { token: aliceToken })).status).toBe(
      404,
    );
    const still = await forge.request('GET', `/user/applications/oauth2/${id}`, { token: aliceToken });
    expect(still.body.name).toBe('mine');
  });

  it('DELETE answers 204, then 404', async () => {
    const created = await forge.request('POST', '/user/applications/oauth2', {
      token: aliceToken,
      body: { name: 'gone', redirect_uris: ['https://gone.example.com/cb'] },
    });
    const path = `/user/applications/oauth2/${created.body.id}`;
    const deleted = await forge.request('DELETE', path, { token: aliceToken });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await forge.request('DELETE', path, { token: aliceToken })).status).toBe(404);
    expect((await forge.request('GET', path, { token: aliceToken })).status).toBe(404);
  });

  it('bad bodies are 422 and create nothing', async () => {
    const before = await forge.request('GET', '/user/applications/oauth2?limit=50', { token: aliceToken });
    const cases: [unknown, string][] = [
      [{ redirect_uris: ['https://a.example.com/cb'] }, '[Name]: Required'],
      [{ name: '', redirect_uris: ['https://a.example.com/cb'] }, '[Name]: Required'],
      [{ name: 'x' }, '[RedirectUris]: Required'],
      [{ name: 'x', redirect_uris: ['not a uri'] }, 'invalid redirect URI: "not a uri"'],
      [
        { name: 'x', redirect_uris: ['https://a.example.com/cb#frag'] },
        'invalid redirect URI (fragment not allowed): "https://a.example.com/cb#frag"',
      ],
    ];
    // NUL (refused at the edge for every route) and other control characters never reach the database.
    cases.push(
      [
        { name: 'a\u0000b', redirect_uris: ['https://a.example.com/cb'] },
        '[Name]: invalid characters (NUL or lone surrogate)',
      ],
      [
        { name: 'a\u0007b', redirect_uris: ['https://a.example.com/cb'] },
        'invalid application name (control character)',
      ],
      [
        { name: 'x', redirect_uris: ['https://a.example.com/c\nb'] },
        'invalid redirect URI (control character)',
      ],
      // Gitea's decoder refuses a number where a string is due, and a string where a list or a bool is.
      [{ name: 1, redirect_uris: ['https://a.example.com/cb'] }, '[Name]: Json'],
      [{ name: 'x', redirect_uris: 'https://a.example.com/cb' }, '[RedirectUris]: Json'],
      [
        { name: 'x', redirect_uris: ['https://a.example.com/cb'], confidential_client: 'true' },
        '[ConfidentialClient]: Json',
      ],
    );
    for (const [body, message] of cases) {
      const response = await forge.request('POST', '/user/applications/oauth2', { token: aliceToken, body });
      expect(response.status, JSON.stringify(body)).toBe(422);
      expect(response.body.message, JSON.stringify(body)).toBe(message);
    }
    const after = await forge.request('GET', '/user/applications/oauth2?limit=50', { token: aliceToken });
    expect(after.body.length).toBe(before.body.length);
  });

  it('needs a signed-in caller and the user scope category (read to list, write to change)', async () => {
    const anonymous = await forge.request('GET', '/user/applications/oauth2');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ message: 'token is required', url: `${forge.appUrl}api/swagger` });
    const readOnly = await forge.createToken(alice, ['read:user']);
    expect((await forge.request('GET', '/user/applications/oauth2', { token: readOnly })).status).toBe(200);
    const create = await forge.request('POST', '/user/applications/oauth2', {
      token: readOnly,
      body: { name: 'x', redirect_uris: ['https://a.example.com/cb'] },
    });
    expect(create.status).toBe(403);
    expect(create.body.message).toBe(
      'token does not have at least one of required scope(s), required=[write:user], token scope=read:user',
    );
    const repoOnly = await forge.createToken(alice, ['read:repository']);
    expect((await forge.request('GET', '/user/applications/oauth2', { token: repoOnly })).status).toBe(403);
  });
});
