import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';

/** Statement names handed out so far, by SQL text; shared by every connection of the process. */
interface StatementNames {
  byText: Map<string, string>;
  capacity: number;
}

// Only plannable statements are worth preparing; DDL, BEGIN/COMMIT and the like go unnamed.
const PLANNABLE = /^\s*(select|insert|update|delete|with)\b/i;

// PostgreSQL refuses to run a prepared `select *` after its table's columns changed (a migration by
// another process): feature_not_supported, "cached plan must not change result type".
function isStalePlan(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === '0A000' && typeof message === 'string' && message.includes('cached plan');
}

/**
 * pg's pool as Kysely's, running each of the first `capacity` distinct DML texts as a named prepared
 * statement: a connection parses and plans such a text once and afterwards sends only Bind/Execute, so
 * the backend skips parse analysis and (once PostgreSQL settles on a generic plan) planning on every
 * later run. The statement is named through pg's public query config (`name`); pg remembers which
 * names a connection prepared and sends Parse only the first time. Kysely emits the
 * same text for the same query shape, so the hot statements of a process are a few dozen; texts beyond
 * `capacity` run unnamed, which bounds the statements a connection keeps.
 */
export function preparedStatementPool(pool: pg.Pool, capacity = 500): PostgresPool {
  const names: StatementNames = { byText: new Map(), capacity };
  // Kysely keys its connection objects by client, so each pg client keeps one wrapper for its life.
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  return {
    connect: async () => {
      const client = await pool.connect();
      let wrapper = wrappers.get(client);
      if (!wrapper) {
        wrapper = wrapClient(client, names);
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
  };
}

function statementName(names: StatementNames, text: string): string | undefined {
  const known = names.byText.get(text);
  if (known !== undefined) return known;
  if (names.byText.size >= names.capacity || !PLANNABLE.test(text)) return undefined;
  const name = `forge_${names.byText.size}`;
  names.byText.set(text, name);
  return name;
}

function wrapClient(client: pg.PoolClient, names: StatementNames): PostgresPoolClient {
  // Set once a prepared statement of this connection went stale: the pool then closes the connection
  // on release (its statements go with it) and a fresh one prepares against the current schema.
  let stale = false;
  const query = async (text: string, parameters: ReadonlyArray<unknown>) => {
    const values = [...parameters];
    const name = statementName(names, text);
    if (name === undefined) return client.query(text, values);
    try {
      return await client.query({ name, text, values });
    } catch (error) {
      if (!isStalePlan(error)) throw error;
      stale = true;
      return client.query(text, values);
    }
  };
  return {
    query: ((textOrCursor: unknown, parameters?: ReadonlyArray<unknown>) =>
      typeof textOrCursor === 'string'
        ? query(textOrCursor, parameters ?? [])
        : client.query(textOrCursor as never)) as unknown as PostgresPoolClient['query'],
    release: () =>
      client.release(stale ? new Error('prepared statement outlived a schema change') : undefined),
  };
}
