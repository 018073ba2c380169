/**
 * The forge's API document: served where Gitea serves its own, rendered by swagger-ui from local files,
 * and a subset of Gitea's document — every operation at Gitea's path and method, with Gitea's parameters
 * and status codes, and every definition field-for-field a field of Gitea's definition of that name.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestForge, type TestForge } from './harness.js';

// biome-ignore lint/suspicious/noExplicitAny: the documents are walked as plain JSON.
type Doc = Record<string, any>;

/** Gitea 1.25.3's own `swagger.v1.json` (templates/swagger/v1_json.tmpl as served), gzipped. */
const giteaDocument: Doc = JSON.parse(
  gunzipSync(readFileSync(new URL('./fixtures/gitea-1.25.3.swagger.v1.json.gz', import.meta.url))).toString(
    'utf8',
  ),
);

/**
 * Where the forge knowingly differs from Gitea's document, each with the reason. Everything not listed
 * here must match.
 */
const KNOWN = {
  /** Operations the forge adds (SSH certificate principals for HTTP signatures). */
  forgeOnly: new Set([
    'get /user/principals',
    'post /user/principals',
    'delete /user/principals/{id}',
    'post /admin/users/{username}/principals',
    // Webhook delivery history and redelivery (Gitea has none; shaped like GitHub's), for every hook scope.
    ...['/repos/{owner}/{repo}/hooks', '/orgs/{org}/hooks', '/user/hooks', '/admin/hooks'].flatMap((base) => [
      `get ${base}/{id}/deliveries`,
      `get ${base}/{id}/deliveries/{delivery}`,
      `post ${base}/{id}/deliveries/{delivery}/attempts`,
    ]),
  ]),
  /** Definitions the forge adds: the webhook delivery history. */
  forgeOnlyDefinitions: new Set(['HookDelivery', 'HookDeliveryDetail']),
  /** Gitea parameters the forge does not implement. */
  unimplementedParameters: new Set([
    'get /admin/users source_id',
    'get /admin/users login_name',
    'delete /admin/users/{username} purge',
    'get /user/keys fingerprint',
    // The forge has system hooks only (no "default" hooks copied into new repositories).
    'get /admin/hooks type',
  ]),
  /** Statuses Gitea answers but its document omits (real Gitea: 201 for a created tag, 500 {ok:false}). */
  undocumentedStatuses: new Set(['post /repos/{owner}/{repo}/tags 201', 'get /users/search 500']),
  /**
   * Fields outside Gitea's definitions: `User.username` Gitea emits but does not declare (User.MarshalJSON
   * adds it); `EditUserOption.keep_email_private` is the forge's one addition (admins set e-mail privacy);
   * `repositories` on tokens is Forgejo's repository-scoped token list (docs/forge/repository-tokens.md).
   */
  undeclaredFields: new Set([
    'User.username',
    'EditUserOption.keep_email_private',
    // Why a hook stopped: its run of failed deliveries and the reason the forge deactivated it.
    'Hook.consecutive_failures',
    'Hook.disabled_reason',
    'AccessToken.repositories',
    'CreateAccessTokenOption.repositories',
  ]),
  /** Operations answering a file stream: Gitea documents 200 without a schema, the route declares none. */
  binaryResponses: new Set([
    'get /repos/{owner}/{repo}/archive/{archive}',
    'get /repos/{owner}/{repo}/raw/{filepath}',
    'get /repos/{owner}/{repo}/media/{filepath}',
  ]),
};

let forge: TestForge;
let document: Doc;

beforeAll(async () => {
  forge = await startTestForge();
  const res = await fetch(`${forge.url}/swagger.v1.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  document = (await res.json()) as Doc;
});

afterAll(async () => {
  await forge?.close();
});

const operations = () =>
  Object.entries(document.paths as Record<string, Doc>).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ path, method, operation: operation as Doc })),
  );

describe('GET /swagger.v1.json', () => {
  it('is a Swagger 2.0 document of the API root, with definitions under Gitea names', () => {
    expect(document.swagger).toBe('2.0');
    expect(document.basePath).toBe('/api/v1');
    expect(document.definitions.Repository.properties.owner).toEqual({ $ref: '#/definitions/User' });
    expect(document.paths['/repos/search'].get.responses['200'].schema).toEqual({
      $ref: '#/definitions/SearchResults',
    });
  });

  it('lists the routes the forge serves, including the repository listings', () => {
    for (const key of [
      'get /repos/search',
      'get /user/repos',
      'get /users/{username}/repos',
      'get /orgs/{org}/repos',
      'get /repos/{owner}/{repo}/releases/{id}',
      'get /repos/{owner}/{repo}/branches/{branch}',
    ]) {
      const [method, path] = key.split(' ') as [string, string];
      expect(document.paths[path]?.[method], key).toBeDefined();
    }
  });

  it('is not served under /api/ (Gitea serves it at the root only)', async () => {
    expect((await fetch(`${forge.url}/api/swagger.v1.json`)).status).toBe(404);
  });
});

describe("a subset of Gitea's document", () => {
  it("every operation exists in Gitea's document at the same path and method", () => {
    const missing = operations()
      .map(({ path, method }) => `${method} ${path}`)
      .filter((key) => !KNOWN.forgeOnly.has(key))
      .filter((key) => {
        const [method, path] = key.split(' ') as [string, string];
        return !giteaDocument.paths[path]?.[method];
      });
    expect(missing).toEqual([]);
  });

  it("every operation has Gitea's parameters: same names, places, types, formats and required flags", () => {
    const differences: string[] = [];
    for (const { path, method, operation } of operations()) {
      const key = `${method} ${path}`;
      const gitea = giteaDocument.paths[path]?.[method] as Doc | undefined;
      if (!gitea) continue;
      const ours = new Map(
        (operation.parameters as Doc[]).map((p) => [p.in === 'body' ? 'body' : `${p.in} ${p.name}`, p]),
      );
      const theirs = new Map(
        ((gitea.parameters ?? []) as Doc[])
          .filter((p) => p.in !== 'formData')
          .map((p) => [p.in === 'body' ? 'body' : `${p.in} ${p.name}`, p]),
      );
      for (const [name, parameter] of ours) {
        const expected = theirs.get(name);
        if (!expected) {
          differences.push(`${key}: ${name} is not Gitea's`);
          continue;
        }
        if (name === 'body') continue;
        for (const attribute of ['type', 'format', 'required']) {
          if (parameter[attribute] !== expected[attribute]) {
            differences.push(`${key}: ${name} ${attribute} ${parameter[attribute]} ≠ ${expected[attribute]}`);
          }
        }
      }
      for (const name of theirs.keys()) {
        const parameterName = name.split(' ')[1];
        if (!ours.has(name) && !KNOWN.unimplementedParameters.has(`${key} ${parameterName}`)) {
          differences.push(`${key}: Gitea's ${name} is missing`);
        }
      }
    }
    expect(differences).toEqual([]);
  });

  it("every status code an operation declares is one Gitea's document gives it", () => {
    const differences: string[] = [];
    for (const { path, method, operation } of operations()) {
      const key = `${method} ${path}`;
      const gitea = giteaDocument.paths[path]?.[method] as Doc | undefined;
      if (!gitea) continue;
      const declared = Object.keys(operation.responses).filter((status) => status !== 'default');
      if (declared.length === 0 && !KNOWN.binaryResponses.has(key))
        differences.push(`${key}: declares no status`);
      for (const status of declared) {
        if (!(status in gitea.responses) && !KNOWN.undocumentedStatuses.has(`${key} ${status}`)) {
          differences.push(`${key}: ${status} not in Gitea's ${Object.keys(gitea.responses).join(',')}`);
        }
      }
    }
    expect(differences).toEqual([]);
  });

  it("every definition is field-for-field a subset of Gitea's definition of that name", () => {
    const differences: string[] = [];
    const resolve = (schema: Doc, definitions: Doc): Doc =>
      schema.$ref ? definitions[(schema.$ref as string).split('/').pop()!] : schema;
    const compare = (where: string, ours: Doc, theirs: Doc | undefined, definition = where) => {
      if (!theirs) {
        differences.push(`${where}: not in Gitea's definition`);
        return;
      }
      // A field that is always null (nothing backs it) fits any Gitea type.
      if (!ours.$ref && ours.type === undefined) return;
      if (ours.$ref && theirs.$ref) {
        if (ours.$ref !== theirs.$ref) differences.push(`${where}: ${ours.$ref} ≠ ${theirs.$ref}`);
        return;
      }
      // One side inline, the other a reference: compare with what the reference names.
      if (ours.$ref || theirs.$ref) {
        const named = ((theirs.$ref ?? ours.$ref) as string).split('/').pop()!;
        compare(
          where,
          resolve(ours, document.definitions),
          resolve(theirs, giteaDocument.definitions),
          named,
        );
        return;
      }
      if (ours.type !== theirs.type) {
        differences.push(`${where}: type ${ours.type} ≠ ${theirs.type}`);
        return;
      }
      if (ours.format && ours.format !== theirs.format)
        differences.push(`${where}: format ${ours.format} ≠ ${theirs.format}`);
      if (ours.type === 'array') compare(`${where}[]`, ours.items, theirs.items, `${definition}[]`);
      if (ours.type === 'object' && ours.properties) {
        for (const [field, schema] of Object.entries(ours.properties as Record<string, Doc>)) {
          if (KNOWN.undeclaredFields.has(`${definition}.${field}`)) continue;
          compare(`${where}.${field}`, schema, theirs.properties?.[field], `${definition}.${field}`);
        }
      }
    };
    for (const [name, schema] of Object.entries(document.definitions as Record<string, Doc>)) {
      const theirs = giteaDocument.definitions[name] as Doc | undefined;
      if (KNOWN.forgeOnlyDefinitions.has(name)) continue;
      if (!theirs) {
        differences.push(`${name}: no such definition in Gitea's document`);
        continue;
      }
      compare(name, schema, resolve(theirs, giteaDocument.definitions));
    }
    expect(differences).toEqual([]);
  });
});

describe('GET /api/swagger', () => {
  it('renders the document with swagger-ui served by the forge itself (no other host)', async () => {
    const res = await fetch(`${forge.url}/api/swagger`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const page = await res.text();
    expect(page).toContain('data-url="/swagger.v1.json"');
    const sources = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    expect(sources).toEqual([
      '/api/swagger/assets/swagger-ui.css',
      '/api/swagger/assets/swagger-ui-bundle.js',
      '/api/swagger/assets/swagger-initializer.js',
    ]);
    for (const source of sources) {
      const asset = await fetch(`${forge.url}${source}`);
      expect(asset.status, source).toBe(200);
      expect(asset.headers.get('content-type'), source).toMatch(/^text\/(css|javascript); charset=utf-8$/);
      expect((await asset.text()).length, source).toBeGreaterThan(0);
    }
    expect((await fetch(`${forge.url}/api/swagger/assets/package.json`)).status).toBe(404);
    expect((await fetch(`${forge.url}/api/swagger/assets/..%2Fpackage.json`)).status).toBe(404);
  });

  it('the url in every error body is that page', async () => {
    const res = await forge.request('GET', '/repos/nobody/nothing');
    expect(res.status).toBe(404);
    expect(res.body.url).toBe(`${forge.appUrl}api/swagger`);
    expect((await fetch(res.body.url)).status).toBe(200);
  });
});
