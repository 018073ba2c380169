import type { Compilable, CompiledQuery, Kysely } from 'kysely';
import type { Database } from './schema.js';

type Db = Kysely<Database>;

interface Template<Row> {
  query: CompiledQuery<Row>;
  /** For each compiled parameter, the index of the argument it stands for, or -1 for a constant. */
  positions: number[];
}

/**
 * A query built and compiled once per database handle, then run with new argument values: building a
 * Kysely query and compiling it to SQL costs more than running a small indexed lookup, and the lookups
 * of every request (token, user) would pay it each time. The SQL text stays the same string, so the
 * SQLite statement cache finds it at once; on PostgreSQL the same text is sent with new parameters.
 *
 * `build` runs once, with a stand-in string for each argument, so it must use its arguments only as
 * query values (never in conditions of its own, never transformed); each stand-in is then mapped to its
 * parameter position. A stand-in that does not reach the parameters is an error at first use.
 */
export function prepared<Args extends unknown[], Row>(
  arity: Args['length'],
  build: (db: Db, ...args: Args) => Compilable<Row>,
): (db: Db, ...args: Args) => Promise<Row[]> {
  // Per handle: a transaction is another handle and compiles its own (it is rarely on a hot path).
  const templates = new WeakMap<Db, Template<Row>>();
  const compile = (db: Db): Template<Row> => {
    const standIns = Array.from({ length: arity }, (_, i) => `\u0000prepared-argument-${i}\u0000`);
    const query = build(db, ...(standIns as Args)).compile();
    const positions = query.parameters.map((value) => standIns.indexOf(value as string));
    const unused = standIns.findIndex((_, i) => !positions.includes(i));
    if (unused >= 0) throw new Error(`prepared query: argument ${unused} is not a parameter of ${query.sql}`);
    return { query, positions };
  };
  return async (db, ...args) => {
    let template = templates.get(db);
    if (!template) {
      template = compile(db);
      templates.set(db, template);
    }
    const { query, positions } = template;
    const parameters = positions.map((at, i) => (at < 0 ? query.parameters[i] : args[at]));
    const { sql, queryId } = query;
    const result = await db.executeQuery<Row>({ query: query.query, queryId, sql, parameters });
    return result.rows;
  };
}
