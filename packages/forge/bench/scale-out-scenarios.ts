/**
 * User search over logins of varied letters (unlike `userNNNNNN`, which every prefix index loves) on
 * every store: SQLite, PostgreSQL with one forge process, and with two sharing one port.
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Scenario } from '../../../bench/scenario.js';
import { openDatabase } from '../src/store/database.js';
import { onEveryStore, startForgeOn } from './bench-store.js';

const USERS = 100_000;

/** A login of varied letters, like real user names (`u` + 9 characters of a hash of `index`). */
function benchName(index: number): string {
  return `u${createHash('sha1').update(String(index)).digest('hex').slice(0, 9)}`;
}

/** Seeds 100 000 users with varied names in batches through Kysely. */
async function seedUsers(databaseUrl: string): Promise<void> {
  const forge = await openDatabase({ url: databaseUrl });
  try {
    const now = Math.floor(Date.now() / 1000);
    for (let start = 0; start < USERS; start += 1000) {
      const rows = Array.from({ length: 1000 }, (_, offset) => {
        const name = benchName(start + offset);
        return {
          lower_name: name,
          name,
          full_name: `Bench User ${start + offset}`,
          email: `${name}@example.com`,
          is_active: 1 as const,
          created_unix: now,
          updated_unix: now,
        };
      });
      await forge.db.insertInto('user').values(rows).execute();
    }
    // Planner statistics as a database that has been running a while has them (autovacuum, or
    // SQLite's optimize), instead of the guesses a freshly filled table gets.
    await sql`ANALYZE`.execute(forge.db);
  } finally {
    await forge.close();
  }
}

/** The varied-login user search on every store configured on this machine. */
export function scaleOutScenarios(): Scenario[] {
  return onEveryStore('forge GET /users/search?q=<5 letters of a login> (100 000 users)', (store) => ({
    async prepare() {
      const service = await startForgeOn(store, (_dir, url) => seedUsers(url));
      return {
        baseUrl: service.baseUrl,
        request: { path: `/api/v1/users/search?q=${benchName(4242).slice(2, 7)}&limit=10` },
        notes: { users: USERS, store },
        ...(service.countStatements ? { countStatements: service.countStatements } : {}),
        teardown: service.stop,
      };
    },
  }));
}
