import Sqlite from 'better-sqlite3';
import { Migrator, sql } from 'kysely';
import pg from 'pg';
import type { Scenario } from '../../../bench/scenario.js';
import { generateToken } from '../src/auth/secrets.js';
import { type DialectName, forgeMigrations, openDatabase } from '../src/store/database.js';
import { insertRelease } from '../src/store/releases.js';
import { insertRepository } from '../src/store/repositories.js';
import { insertToken } from '../src/store/tokens.js';
import { insertUser } from '../src/store/users.js';
import { type BenchStore, onEveryStore, startForgeOn } from './bench-store.js';
import { scaleOutScenarios } from './scale-out-scenarios.js';
import { variedScenarios } from './varied-scenarios.js';

const directSql = new URL('./direct-sql-server.mjs', import.meta.url).pathname;

/** What a data scenario needs of its forge: where it answers, and its direct-SQL baseline (SQLite only). */
interface ScenarioForge {
  baseUrl: string;
  /** The direct-SQL baseline of `kind` (see direct-sql-server.mjs), on the SQLite store only. */
  direct(kind: string, ...args: string[]): { script: string; args: string[] } | undefined;
  countStatements?(): Promise<number>;
  stop(): Promise<void>;
}

/** Starts forge on `store` after `seed` filled its database (given the data dir and database URL). */
async function startForge(
  store: BenchStore,
  seed?: (dir: string, databaseUrl: string) => Promise<void>,
): Promise<ScenarioForge> {
  const forge = await startForgeOn(store, seed);
  return {
    baseUrl: forge.baseUrl,
    direct: (kind, ...args) =>
      store === 'sqlite' ? { script: directSql, args: [forge.sqliteFile, kind, ...args] } : undefined,
    ...(forge.countStatements ? { countStatements: forge.countStatements } : {}),
    stop: forge.stop,
  };
}

const RELEASES = 10_000;

/**
 * Seeds, through the store, a public repository `bench/big` with 10 000 records: mostly published
 * releases, every 10th a draft, every 7th a prerelease, every 50th a tag-only record.
 */
export async function seedReleases(_dir: string, databaseUrl: string): Promise<void> {
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
export async function seedUsers(databaseUrl: string, count: number, migrate = true): Promise<string> {
  const forge = await openDatabase({ url: databaseUrl, migrate });
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

/** The `(user_id, created_unix)` of action `i` of `seedActions`' million, the same on every store. */
function actionRow(i: number, benchId: number, now: number): [number, number] {
  const step = Math.floor((ACTIONS / OWN_ACTIONS) | 0);
  const uid = i % step === 0 ? benchId : benchId + 1 + (i % OTHER_USERS);
  return [uid, now - Math.floor((i / ACTIONS) * 360 * 86400)];
}

/**
 * Seeds `bench` and 1 000 other users, then 1 000 000 action rows spread over the last year: 20 000 are
 * bench's own acts in its feed, the rest belong to the others' feeds. The store's builder would take
 * minutes for a million rows, so the actions go in straight: on SQLite one prepared INSERT in one
 * transaction, on PostgreSQL 100 000 rows per INSERT … SELECT FROM unnest(arrays) (one round trip each).
 */
export async function seedActions(_dir: string, databaseUrl: string): Promise<void> {
  const forge = await openDatabase({ url: databaseUrl, migrate: false });
  const now = Math.floor(Date.now() / 1000);
  let benchId: number;
  try {
    // The actions go in before the activity-count tables exist: their migration back-fills the counts in
    // one GROUP BY, while their triggers would update two count rows per inserted action (over ten
    // minutes for a million on PostgreSQL). Opening the database at the end migrates the rest.
    const migrator = new Migrator({
      db: forge.db,
      provider: { getMigrations: async () => forgeMigrations(forge.dialect) },
    });
    const { error } = await migrator.migrateTo(LAST_MIGRATION_BEFORE_ACTIVITY_COUNTS);
    if (error) throw error;
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
  await seedUsers(databaseUrl, OTHER_USERS, false);
  await insertActions(forge.dialect, databaseUrl, benchId, now);
  const migrated = await openDatabase({ url: databaseUrl });
  try {
    // SQLite's planner statistics for the tables the last migrations filled (PostgreSQL's bench
    // database gets VACUUM ANALYZE before forge starts).
    if (migrated.dialect === 'sqlite') await sql`ANALYZE`.execute(migrated.db);
  } finally {
    await migrated.close();
  }
}

const LAST_MIGRATION_BEFORE_ACTIVITY_COUNTS = '008_activity_indexes';

/** `seedActions`' million rows, straight on the store (the store's builder would take minutes). */
async function insertActions(dialect: DialectName, databaseUrl: string, benchId: number, now: number) {
  if (dialect === 'sqlite') {
    const db = new Sqlite(databaseUrl.replace(/^sqlite:/, ''));
    try {
      const insert = db.prepare(
        `INSERT INTO action (user_id, op_type, act_user_id, repo_id, comment_id, ref_name, is_private,
           is_deleted, content, created_unix) VALUES (?, 5, ?, 0, 0, 'refs/heads/main', 0, 0, '', ?)`,
      );
      db.transaction(() => {
        for (let i = 0; i < ACTIONS; i++) {
          const [uid, created] = actionRow(i, benchId, now);
          insert.run(uid, uid, created);
        }
      })();
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('BEGIN');
    const BATCH = 100_000;
    for (let start = 0; start < ACTIONS; start += BATCH) {
      const users: number[] = [];
      const created: number[] = [];
      for (let i = start; i < Math.min(start + BATCH, ACTIONS); i++) {
        const [uid, at] = actionRow(i, benchId, now);
        users.push(uid);
        created.push(at);
      }
      await client.query(
        `INSERT INTO action (user_id, op_type, act_user_id, repo_id, comment_id, ref_name, is_private,
           is_deleted, content, created_unix)
         SELECT u, 5, u, 0, 0, 'refs/heads/main', 0, 0, '', c FROM unnest($1::bigint[], $2::bigint[]) AS t(u, c)`,
        [users, created],
      );
    }
    await client.query('COMMIT');
  } finally {
    await client.end();
  }
}

/** A user activity route over `seedActions`' million rows, read anonymously. */
function activityScenarios(label: string, path: string, kind: string, ...args: string[]): Scenario[] {
  return onEveryStore(`forge GET /users/{u}/${label} (1 000 000 actions, 20 000 the user's)`, (store) => ({
    async prepare() {
      const service = await startForge(store, seedActions);
      return {
        baseUrl: service.baseUrl,
        request: { path },
        notes: { actions: ACTIONS, own: OWN_ACTIONS },
        direct: service.direct(kind, 'bench', ...args),
        ...(service.countStatements ? { countStatements: service.countStatements } : {}),
        teardown: service.stop,
      };
    },
  }));
}

/** `GET /users/search?q=…` matching ten users out of `count`. */
function userSearchScenarios(count: number): Scenario[] {
  return onEveryStore(`forge GET /users/search?q=… (${count.toLocaleString('en')} users)`, (store) => ({
    async prepare() {
      const service = await startForge(store, async (_dir, url) => {
        await seedUsers(url, count);
      });
      const keyword = benchUserName(Math.floor(count / 2)).slice(0, -1);
      return {
        baseUrl: service.baseUrl,
        request: { path: `/api/v1/users/search?q=${keyword}` },
        notes: { users: count, matches: 10 },
        direct: service.direct('search', keyword),
        ...(service.countStatements ? { countStatements: service.countStatements } : {}),
        teardown: service.stop,
      };
    },
  }));
}

export const scenarios: Scenario[] = [
  {
    name: 'forge GET /api/v1/version',
    async prepare() {
      const service = await startForge('sqlite');
      return { baseUrl: service.baseUrl, request: { path: '/api/v1/version' }, teardown: service.stop };
    },
  },
  ...onEveryStore('forge GET /repos/{o}/{r}/releases?limit=50 (10 000 releases)', (store) => ({
    async prepare() {
      const service = await startForge(store, seedReleases);
      return {
        baseUrl: service.baseUrl,
        request: { path: '/api/v1/repos/bench/big/releases?limit=50' },
        notes: { releases: RELEASES, pageSize: 50 },
        direct: service.direct('releases', 'bench', 'big', '50'),
        ...(service.countStatements ? { countStatements: service.countStatements } : {}),
        teardown: service.stop,
      };
    },
  })),
  ...onEveryStore('forge GET /repos/{o}/{r}/releases/latest (10 000 releases)', (store) => ({
    async prepare() {
      const service = await startForge(store, seedReleases);
      return {
        baseUrl: service.baseUrl,
        request: { path: '/api/v1/repos/bench/big/releases/latest' },
        notes: { releases: RELEASES },
        direct: service.direct('releases', 'bench', 'big', '1'),
        ...(service.countStatements ? { countStatements: service.countStatements } : {}),
        teardown: service.stop,
      };
    },
  })),
  ...userSearchScenarios(1_000),
  ...userSearchScenarios(100_000),
  ...onEveryStore('forge GET /users/{username} with a token (100 000 users)', (store) => ({
    async prepare() {
      let token = '';
      const service = await startForge(store, async (_dir, url) => {
        token = await seedUsers(url, 100_000);
      });
      return {
        baseUrl: service.baseUrl,
        request: {
          path: `/api/v1/users/${benchUserName(54_321)}`,
          headers: { authorization: `token ${token}` },
        },
        notes: { users: 100_000 },
        direct: service.direct('user', benchUserName(54_321)),
        ...(service.countStatements ? { countStatements: service.countStatements } : {}),
        teardown: service.stop,
      };
    },
  })),
  ...activityScenarios('heatmap', '/api/v1/users/bench/heatmap', 'heatmap'),
  ...activityScenarios(
    'activities/feeds?limit=30',
    '/api/v1/users/bench/activities/feeds?limit=30',
    'feeds',
    '30',
  ),
  ...scaleOutScenarios(),
  ...variedScenarios(),
];
