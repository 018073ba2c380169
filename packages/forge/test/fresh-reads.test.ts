// Read-after-write over HTTP with readers racing the writes (issue 35): every read sent after a
// write's answer arrived reflects the write, whatever the caller's credential. The answers read here
// are the ones forge keeps (cache/read-view.ts); with caches off (FORGE_CACHE=off) the same checks
// run against the uncached path.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestForge, type TestForge, type TestUser } from './harness.js';
import { checkFreshReads } from './read-after-write.js';
import { createRepo, type TestRepo } from './repo-fixtures.js';
import { testingPostgres } from './test-database.js';

let forge: TestForge;
let hidden: TestUser;
let other: TestUser;
let otherRepo: TestRepo;

beforeAll(async () => {
  forge = await startTestForge();
  hidden = await forge.createUser({ visibility: 'private' });
  other = await forge.createUser();
  otherRepo = await createRepo(forge, await forge.createToken(other, ['write:repository', 'write:user']));
  const release = await forge.request('POST', `${otherRepo.path}/releases`, {
    token: forge.admin.token,
    body: { tag_name: 'v1' },
  });
  expect(release.status).toBe(201);
}, 60_000);
afterAll(async () => {
  await forge?.close();
});

const store = testingPostgres() ? 'PostgreSQL' : 'SQLite';

/** `PATCH /admin/users/{name}` as the site administrator. */
async function editUser(name: string, body: Record<string, unknown>): Promise<void> {
  const edited = await forge.request('PATCH', `/admin/users/${name}`, { token: forge.admin.token, body });
  if (edited.status !== 200) throw new Error(`edit ${name}: ${edited.status} ${edited.text}`);
}

describe(`HTTP Basic with a password: changes to the caller's own account (${store})`, () => {
  const asCaller = (caller: TestUser) => (path: string) => forge.request('GET', path, { basic: caller });

  it('an administrator demoted (and promoted again) reads private users as they now may', async () => {
    const caller = await forge.createUser({ admin: true });
    const get = asCaller(caller);
    let admin = true;
    const result = await checkFreshReads(3, async () => {
      admin = !admin;
      return {
        read: async () => String((await get(`/users/${hidden.username}`)).status),
        write: () => editUser(caller.username, { admin }),
        after: admin ? '200' : '404',
      };
    });
    expect(result.stale).toEqual([]);
    expect(result.judged).toBeGreaterThan(0);
  });

  it("a user made restricted (and unrestricted) reads another user's public releases as they now may", async () => {
    const caller = await forge.createUser();
    const get = asCaller(caller);
    let restricted = false;
    const result = await checkFreshReads(3, async () => {
      restricted = !restricted;
      return {
        read: async () => String((await get(`${otherRepo.path}/releases?limit=1`)).status),
        write: () => editUser(caller.username, { restricted }),
        after: restricted ? '404' : '200',
      };
    });
    expect(result.stale).toEqual([]);
  });

  it("the caller's own visibility, as they read themselves", async () => {
    const caller = await forge.createUser();
    const get = asCaller(caller);
    const visibilities = ['private', 'limited', 'public'];
    const result = await checkFreshReads(3, async (round) => {
      const visibility = visibilities[round % visibilities.length]!;
      return {
        read: async () => {
          const answer = await get(`/users/${caller.username}`);
          return `${answer.status} ${answer.body?.visibility}`;
        },
        write: () => editUser(caller.username, { visibility }),
        after: `200 ${visibility}`,
      };
    });
    expect(result.stale).toEqual([]);
  });

  it('prohibit_login set (and cleared) refuses (and admits) the caller', async () => {
    const caller = await forge.createUser();
    const get = asCaller(caller);
    let prohibited = false;
    const result = await checkFreshReads(3, async () => {
      prohibited = !prohibited;
      return {
        read: async () => String((await get(`/users/${other.username}`)).status),
        write: () => editUser(caller.username, { prohibit_login: prohibited }),
        after: prohibited ? '403' : '200',
      };
    });
    expect(result.stale).toEqual([]);
  });
});
