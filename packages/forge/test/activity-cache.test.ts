// The heatmap keeps its answers (cache/heatmap-cache.ts) while the activity generations that
// database triggers bump (migration 012) stay the same. These tests fill the cache with a request, change
// what the answer depends on (over HTTP where the API can, on the database where only an operator or
// another process can), then ask again: the answer must be that of the rows now, never the kept one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heatmapBuckets } from '../src/store/action-heatmap.js';
import { insertActions } from '../src/store/actions.js';
import { startTestForge, type TestForge, type TestUser } from './harness.js';
import { createRepo, type TestRepo } from './repo-fixtures.js';
import { testingPostgres } from './test-database.js';

let forge: TestForge;
beforeAll(async () => {
  forge = await startTestForge();
}, 60_000);
afterAll(() => forge?.close());

type Contribution = { timestamp: number; contributions: number };
const YEAR = 365 * 24 * 60 * 60;
const sum = (buckets: Contribution[]) => buckets.reduce((n, b) => n + b.contributions, 0);

describe(`heatmap answers kept between requests (${testingPostgres() ? 'PostgreSQL' : 'SQLite'})`, () => {
  let owner: TestUser;
  let ownerToken: string;
  let reader: TestUser;
  let org: { id: number; name: string };
  let publicRepo: TestRepo;
  let privateRepo: TestRepo;

  beforeAll(async () => {
    owner = await forge.createUser();
    reader = await forge.createUser();
    ownerToken = await forge.createToken(owner, ['write:repository', 'write:organization', 'write:user']);
    org = await forge.createOrg(ownerToken, {});
    publicRepo = await createRepo(forge, ownerToken);
    privateRepo = await createRepo(forge, ownerToken, { private: true });
    await createRepo(forge, ownerToken, { org: org.name });
  });

  /** The heatmap of `name` as `viewer` sees it (anonymous without one), asked twice: the second is kept. */
  const heatmap = async (name: string, viewer?: TestUser) => {
    const auth = viewer ? { basic: viewer } : {};
    const first = await forge.request<Contribution[]>('GET', `/users/${name}/heatmap`, auth);
    expect(first.status).toBe(200);
    const second = await forge.request<Contribution[]>('GET', `/users/${name}/heatmap`, auth);
    expect(second.body).toEqual(first.body);
    return first.body;
  };

  /** The answer counted on the rows now, without the cache (the store's own query, as an admin sees it). */
  const counted = async (userId: number, isOrg: boolean) =>
    heatmapBuckets(forge.ctx.db, {
      userId,
      performedByUser: !isOrg,
      since: Math.floor(Date.now() / 1000) - YEAR,
      viewer: null,
    });

  it('a new action, recorded by the API or written by another process, is in the next answer', async () => {
    const before = await heatmap(owner.username);
    expect(sum(before)).toBeGreaterThan(0);
    await createRepo(forge, ownerToken);
    const afterApi = await heatmap(owner.username);
    expect(sum(afterApi)).toBeGreaterThan(sum(before));

    await insertActions(forge.ctx.db, [
      { user_id: owner.id, act_user_id: owner.id, op_type: 5, created_unix: Math.floor(Date.now() / 1000) },
    ]);
    const afterWrite = await heatmap(owner.username);
    expect(sum(afterWrite)).toBe(sum(afterApi) + 1);
    expect(await heatmap(owner.username, forge.admin)).toEqual(await counted(owner.id, false));
  });

  it('a repository turning private leaves the anonymous answer at once, and comes back', async () => {
    const before = await heatmap(owner.username);
    const own = await heatmap(owner.username, owner);
    const hide = await forge.request('PATCH', publicRepo.path, {
      token: ownerToken,
      body: { private: true },
    });
    expect(hide.status).toBe(200);
    const hidden = await heatmap(owner.username);
    expect(sum(hidden)).toBeLessThan(sum(before));
    expect(await heatmap(owner.username, owner)).toEqual(own);

    const show = await forge.request('PATCH', publicRepo.path, {
      token: ownerToken,
      body: { private: false },
    });
    expect(show.status).toBe(200);
    expect(await heatmap(owner.username)).toEqual(before);
  });

  it('a collaboration granted and removed shows in the collaborator’s next answer', async () => {
    const outside = await heatmap(owner.username, reader);
    const grant = await forge.request('PUT', `${privateRepo.path}/collaborators/${reader.username}`, {
      token: ownerToken,
      body: { permission: 'read' },
    });
    expect(grant.status).toBe(204);
    const inside = await heatmap(owner.username, reader);
    expect(sum(inside)).toBeGreaterThan(sum(outside));

    const revoke = await forge.request('DELETE', `${privateRepo.path}/collaborators/${reader.username}`, {
      token: ownerToken,
    });
    expect(revoke.status).toBe(204);
    expect(await heatmap(owner.username, reader)).toEqual(outside);
  });

  it("an actor turning limited leaves the organization's anonymous answer, not a signed-in reader's", async () => {
    const anonymous = await heatmap(org.name);
    const signedIn = await heatmap(org.name, reader);
    expect(sum(anonymous)).toBeGreaterThan(0);
    const limit = await forge.request('PATCH', `/admin/users/${owner.username}`, {
      token: forge.admin.token,
      body: { login_name: owner.username, source_id: 0, visibility: 'limited' },
    });
    expect(limit.status).toBe(200);
    expect(await heatmap(org.name)).toEqual([]);
    expect(await heatmap(org.name, reader)).toEqual(signedIn);

    const open = await forge.request('PATCH', `/admin/users/${owner.username}`, {
      token: forge.admin.token,
      body: { login_name: owner.username, source_id: 0, visibility: 'public' },
    });
    expect(open.status).toBe(200);
    expect(await heatmap(org.name)).toEqual(anonymous);
  });

  it("an actor keeping activity private (set on the database) leaves the organization's answer", async () => {
    const anonymous = await heatmap(org.name);
    const signedIn = await heatmap(org.name, reader);
    expect(sum(signedIn)).toBeGreaterThan(0);
    const keep = (flag: 0 | 1) =>
      forge.ctx.db
        .updateTable('user')
        .set({ keep_activity_private: flag })
        .where('id', '=', owner.id)
        .execute();
    await keep(1);
    expect(await heatmap(org.name)).toEqual([]);
    expect(await heatmap(org.name, reader)).toEqual([]);
    expect(await heatmap(org.name, forge.admin)).toEqual(await counted(org.id, true));
    await keep(0);
    expect(await heatmap(org.name)).toEqual(anonymous);
    expect(await heatmap(org.name, reader)).toEqual(signedIn);
  });
});
