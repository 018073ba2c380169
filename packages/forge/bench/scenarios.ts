import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
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
const directSql = new URL('./direct-sql-server.mjs', import.meta.url).pathname;

/** Starts forge on a throw-away data dir, after `seed` filled its database. */
async function startForge(seed?: (dir: string) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), 'forge-bench-'));
  await seed?.(dir);
  const service = await startService(cli, ['--data-dir', dir], '/api/v1/version');
  return {
    baseUrl: service.baseUrl,
    /** The direct-SQL baseline of `kind` (see direct-sql-server.mjs) on this forge's database. */
    direct: (kind: string, ...args: string[]) => ({
      script: directSql,
      args: [join(dir, 'forge.db'), kind, ...args],
    }),
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

const ACTIONS = 1_000_000;
const OWN_ACTIONS = 20_000;
const OTHER_USERS = 1_000;

/**
 * Seeds `bench` and 1 000 other users, then 1 000 000 action rows spread over the last year: 20 000 are
 * bench's own acts in its feed, the rest belong to the others' feeds. One prepared INSERT in one
 * transaction, straight on the SQLite file (the store's builder would take minutes for a million rows).
 */
export async function seedActions(dir: string): Promise<void> {
  const file = join(dir, 'forge.db');
  const forge = await openDatabase({ url: `sqlite:${file}` });
  let benchId: number;
  try {
    const now = Math.floor(Date.now() / 1000);
    const bench = await insertUser(forge.db, {
      lower_name: 'bench',
      name: 'bench',
      email: 'bench@example.com',
      is_active: 1,
      created_unix: now,
      updated_unix: now,
    });
    benchId = bench.id;
  } finally {
    await forge.close();
  }
  await seedUsers(dir, OTHER_USERS);
  const db = new Sqlite(file);
  try {
    const now = Math.floor(Date.now() / 1000);
    const insert = db.prepare(
      `INSERT INTO action (user_id, op_type, act_user_id, repo_id, comment_id, ref_name, is_private,
         is_deleted, content, created_unix) VALUES (?, 5, ?, 0, 0, 'refs/heads/main', 0, 0, '', ?)`,
    );
    db.transaction(() => {
      const step = Math.floor((ACTIONS / OWN_ACTIONS) | 0);
      for (let i = 0; i < ACTIONS; i++) {
        const own = i % step === 0;
        const other = benchId + 1 + (i % OTHER_USERS);
        const uid = own ? benchId : other;
        insert.run(uid, uid, now - Math.floor((i / ACTIONS) * 360 * 86400));
      }
    })();
    db.exec('ANALYZE');
  } finally {
    db.close();
  }
}

/** A user activity route over `seedActions`' million rows, read anonymously. */
function activityScenario(label: string, path: string, kind: string, ...args: string[]): Scenario {
  return {
    name: `forge GET /users/{u}/${label} (1 000 000 actions, 20 000 the user's)`,
    async prepare() {
      const service = await startForge(seedActions);
      return {
        baseUrl: service.baseUrl,
        request: { path },
        notes: { actions: ACTIONS, own: OWN_ACTIONS },
        direct: service.direct(kind, 'bench', ...args),
        teardown: service.stop,
      };
    },
  };
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
        direct: service.direct('search', keyword),
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
        direct: service.direct('releases', 'bench', 'big', '50'),
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
        direct: service.direct('releases', 'bench', 'big', '1'),
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
        direct: service.direct('user', benchUserName(54_321)),
        teardown: service.stop,
      };
    },
  },
  activityScenario('heatmap', '/api/v1/users/bench/heatmap', 'heatmap'),
  activityScenario(
    'activities/feeds?limit=30',
    '/api/v1/users/bench/activities/feeds?limit=30',
    'feeds',
    '30',
  ),
  ...scaleOutScenarios(seedReleases),
];
