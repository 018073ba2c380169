import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';

/**
 * better-sqlite3 as Kysely's SQLite database, reusing the prepared statement of each SQL text (least
 * recently used ones beyond `capacity` are dropped). Kysely prepares every query anew, which costs more
 * than running the small queries of an API request; statements are only ever run to completion
 * synchronously, so sharing them is safe.
 */
export function withStatementCache(sqlite: BetterSqlite3.Database, capacity = 500): SqliteDatabase {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => {
      cache.clear();
      sqlite.close();
    },
    prepare: (sql: string) => {
      const cached = cache.get(sql);
      if (cached) {
        cache.delete(sql);
        cache.set(sql, cached);
        return cached;
      }
      const statement = sqlite.prepare(sql);
      cache.set(sql, statement);
      if (cache.size > capacity) cache.delete(cache.keys().next().value as string);
      return statement;
    },
  };
}
