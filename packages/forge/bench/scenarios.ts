import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Scenario } from '../../../bench/scenario.js';
import { startService } from '../../../bench/service-process.js';
import { generateToken } from '../src/auth/secrets.js';
import { openDatabase } from '../src/store/database.js';
import { insertRelease } from '../src/store/releases.js';
import { insertRepository } from '../src/store/repositories.js';
import { insertToken } from '../src/store/tokens.js';
import { insertUser } from '../src/store/users.js';
import { scaleOutScenarios } from './scale-out-scenarios.js';

const cli = new URL('../dist/cli.js', import.meta.url).pathname;

/** Starts forge on a throw-away data dir, after `seed` filled its database. */
async function startForge(seed?: (dir: string) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), 'forge-bench-'));
  await seed?.(dir);
  const service = await startService(cli, ['--data-dir', dir], '/api/v1/version');
  return {
    baseUrl: service.baseUrl,
    stop: async () => {
      await service.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const RELEASES = 10_000;

/**
 * Seeds, through the store, a public repository `bench/big` with 10 000 records: mostly published
 * releases, every 10th a draft, every 7th a prerelease, every 50th a tag-only record.
 */
export async function seedReleases(
  dir: string,
  databaseUrl = `sqlite:${join(dir, 'forge.db')}`,
): Promise<void> {
  const forge = await openDatabase({ url: databaseUrl });
  try {
    const now = Math.floor(Date.now() / 1000);
    const user = await insertUser(forge.db, {
      lower_name: 'bench',
      name: 'bench',
      email: 'bench@example.com',
      is_active: 1,
      created_unix: now,
      updated_unix: now,
    });
    const repo = await insertRepository(forge.db, {
      owner: user,
      name: 'big',
      description: 'release list benchmark',
      website: '',
      isPrivate: false,
      defaultBranch: 'main',
      now,
    });
    await forge.db.transaction().execute(async (trx) => {
      for (let i = 0; i < RELEASES; i++) {
        await insertRelease(trx, {
          repoId: repo.id,
          publisherId: user.id,
          tagName: `v1.${i}`,
          target: 'main',
          title: `Release 1.${i}`,
          note: `Notes for release 1.${i}: fixes and improvements.`,
          sha1: '0123456789abcdef0123456789abcdef01234567',
          numCommits: i + 1,
          isDraft: i % 10 === 3,
          isPrerelease: i % 7 === 5,
          isTag: i % 50 === 49,
          createdUnix: now - RELEASES + i,
        });
      }
    });
  } finally {
    await forge.close();
  }
}

/** `user000042`-style names: a keyword like `user00004` then matches exactly ten users at any size. */
const benchUserName = (i: number) => `user${String(i).padStart(6, '0')}`;

/**
 * Seeds `count` public users straight through the store (batched inserts, no password hashing) plus a
 * `read:user` token for the first one; returns the plain token.
 */
export async function seedUsers(dir: string, count: number): Promise<string> {
  const forge = await openDatabase({ url: `sqlite:${join(dir, 'forge.db')}` });
  try {
    const now = Math.floor(Date.now() / 1000);
    const BATCH = 1000;
    await forge.db.transaction().execute(async (trx) => {
      for (let start = 0; start < count; start += BATCH) {
        const rows = [];
        for (let i = start; i < Math.min(start + BATCH, count); i++) {
          const name = benchUserName(i);
          rows.push({
            lower_name: name,
            name,
            full_name: `Bench User ${i}`,
            email: `${name}@example.com`,
            created_unix: now,
            updated_unix: now,
          });
        }
        await trx.insertInto('user').values(rows).execute();
      }
    });
    const owner = await forge.db
      .selectFrom('user')
      .select('id')
      .where('lower_name', '=', benchUserName(0))
      .executeTakeFirstOrThrow();
    const secret = generateToken();
    await insertToken(forge.db, {
      uid: owner.id,
      name: 'bench',
      token_hash: secret.hash,
      token_salt: secret.salt,
      token_last_eight: secret.lastEight,
      scope: 'read:user',
      created_unix: now,
      updated_unix: now,
    });
    return secret.token;
  } finally {
    await forge.close();
  }
}

/** `GET /users/search?q=…` matching ten users out of `count`. */
function userSearchScenario(count: number): Scenario {
  return {
    name: `forge GET /users/search?q=… (${count.toLocaleString('en')} users)`,
    async prepare() {
      const service = await startForge(async (dir) => {
        await seedUsers(dir, count);
      });
      const keyword = benchUserName(Math.floor(count / 2)).slice(0, -1);
      return {
        baseUrl: service.baseUrl,
        request: { path: `/api/v1/users/search?q=${keyword}` },
        notes: { users: count, matches: 10 },
        teardown: service.stop,
      };
    },
  };
}

export const scenarios: Scenario[] = [
  {
    name: 'forge GET /api/v1/version',
    async prepare() {
      const service = await startForge();
      return { baseUrl: service.baseUrl, request: { path: '/api/v1/version' }, teardown: service.stop };
    },
  },
  {
    name: 'forge GET /repos/{o}/{r}/releases?limit=50 (10 000 releases)',
    async prepare() {
      const service = await startForge(seedReleases);
      return {
        baseUrl: service.baseUrl,
        request: { path: '/api/v1/repos/bench/big/releases?limit=50' },
        notes: { releases: RELEASES, pageSize: 50 },
        teardown: service.stop,
      };
    },
  },
  {
    name: 'forge GET /repos/{o}/{r}/releases/latest (10 000 releases)',
    async prepare() {
      const service = await startForge(seedReleases);
      return {
        baseUrl: service.baseUrl,
        request: { path: '/api/v1/repos/bench/big/releases/latest' },
        notes: { releases: RELEASES },
        teardown: service.stop,
      };
    },
  },
  userSearchScenario(1_000),
  userSearchScenario(100_000),
  {
    name: 'forge GET /users/{username} with a token (100 000 users)',
    async prepare() {
      let token = '';
      const service = await startForge(async (dir) => {
        token = await seedUsers(dir, 100_000);
      });
      return {
        baseUrl: service.baseUrl,
        request: {
          path: `/api/v1/users/${benchUserName(54_321)}`,
          headers: { authorization: `token ${token}` },
        },
        notes: { users: 100_000 },
        teardown: service.stop,
      };
    },
  },
  ...scaleOutScenarios(seedReleases),
];
