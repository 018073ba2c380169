import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestForge, type TestForge, type TestUser } from './harness.js';
import { createRepo } from './repo-fixtures.js';

const SWAGGER = '/work/shared/reference/gitea-1.25.3.swagger.v1.json';

/**
 * Gitea's Go struct makes these properties pointers that it omits when the feature is off (not a fork,
 * no trackers, no external wiki, no pending transfer). Swagger 2.0 cannot say "nullable", so the
 * validator is told that null is what the forge sends for them; every other property is checked as
 * Gitea's document declares it.
 */
const NULLABLE_POINTERS = [
  'parent',
  'internal_tracker',
  'external_tracker',
  'external_wiki',
  'repo_transfer',
];

type Json = Record<string, unknown>;

/** Gitea's definitions as JSON Schema: every Repository property required, the pointers nullable. */
function giteaRepositoryValidator() {
  const swagger = JSON.parse(readFileSync(SWAGGER, 'utf8')) as { definitions: Record<string, Json> };
  const definitions = structuredClone(swagger.definitions);
  const repository = definitions.Repository as { properties: Record<string, Json>; required?: string[] };
  repository.required = Object.keys(repository.properties);
  for (const name of NULLABLE_POINTERS) {
    repository.properties[name] = { anyOf: [repository.properties[name]!, { type: 'null' }] };
  }
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: 'gitea', definitions });
  return {
    propertyCount: Object.keys(repository.properties).length,
    validate: ajv.compile({ $ref: 'gitea#/definitions/Repository' }),
  };
}

describe('the Repository object', () => {
  let forge: TestForge;
  let owner: TestUser;
  let token: string;
  const { validate, propertyCount } = giteaRepositoryValidator();

  const check = (where: string, repository: unknown) => {
    const ok = validate(repository);
    expect({ where, errors: ok ? null : validate.errors }).toEqual({ where, errors: null });
    expect(Object.keys(repository as Json)).toHaveLength(propertyCount);
  };

  beforeAll(async () => {
    forge = await startTestForge();
    owner = await forge.createUser();
    token = await forge.createToken(owner, ['write:repository', 'write:organization', 'write:user']);
  });
  afterAll(() => forge.close());

  it("Gitea's definition has 65 properties and every repository answer has all of them, valid", async () => {
    expect(propertyCount).toBe(65);
    // An organization without an e-mail has `"email": ""` in Gitea too, which Gitea's own format: email refuses.
    const org = await forge.createOrg(token, { email: 'org@example.com' });
    const created = await forge.request('POST', '/user/repos', {
      token,
      body: { name: 'shape-user', auto_init: true, private: true },
    });
    expect(created.status).toBe(201);
    check('POST /user/repos', created.body);
    const inOrg = await forge.request('POST', `/orgs/${org.name}/repos`, {
      token,
      body: { name: 'shape-org' },
    });
    check('POST /orgs/{org}/repos', inOrg.body);
    const path = `/repos/${owner.username}/shape-user`;
    check('GET /repos/{o}/{r}', (await forge.request('GET', path, { token })).body);
    check(
      'PATCH /repos/{o}/{r}',
      (await forge.request('PATCH', path, { token, body: { description: 'd' } })).body,
    );
    for (const list of ['/user/repos', `/users/${owner.username}/repos`, `/orgs/${org.name}/repos`]) {
      const res = await forge.request('GET', list, { token });
      expect(res.body.length).toBeGreaterThan(0);
      for (const repository of res.body) check(`GET ${list}`, repository);
    }
    const search = await forge.request('GET', '/repos/search?q=shape', { token });
    expect(search.body.data.length).toBe(2);
    for (const repository of search.body.data) check('GET /repos/search', repository);
  });

  it('sends the values Gitea sends for features the forge lacks, and the caller permissions', async () => {
    const repo = await createRepo(forge, token);
    const mine = (await forge.request('GET', repo.path, { token })).body;
    expect(mine).toMatchObject({
      has_code: true,
      has_issues: false,
      has_wiki: false,
      has_pull_requests: false,
      has_projects: false,
      has_releases: true,
      has_packages: false,
      has_actions: false,
      parent: null,
      internal_tracker: null,
      external_tracker: null,
      external_wiki: null,
      repo_transfer: null,
      projects_mode: 'all',
      default_merge_style: 'merge',
      allow_merge_commits: false,
      mirror_interval: '',
      mirror_updated: '0001-01-01T00:00:00Z',
      archived_at: '1970-01-01T00:00:00Z',
      topics: [],
      licenses: [],
      languages_url: `${forge.appUrl}api/v1${repo.path}/languages`,
      permissions: { admin: true, push: true, pull: true },
    });
    const stranger = await forge.createUser();
    const strangerToken = await forge.createToken(stranger, ['read:repository']);
    const theirs = (await forge.request('GET', repo.path, { token: strangerToken })).body;
    expect(theirs.permissions).toEqual({ admin: false, push: false, pull: true });
    expect((await forge.request('GET', repo.path)).body.permissions).toEqual({
      admin: false,
      push: false,
      pull: true,
    });
  });
});
