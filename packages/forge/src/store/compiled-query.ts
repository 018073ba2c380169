import type { Compilable, CompiledQuery, Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

type Db = Kysely<Database> | Transaction<Database>;

/** Queries with a longer `in` list are not kept (a page holds at most 50 rows by default). */
const MAX_KEPT_LIST = 100;

/** Stands in for one call value (or one element of an array value) while a query is compiled. */
class Slot {
  constructor(
    readonly arg: number,
    /** Index in an array value; -1 for a plain value. */
    readonly element: number,
  ) {}

  valueIn(values: readonly unknown[]): unknown {
    const value = values[this.arg];
    return this.element < 0 ? value : (value as readonly unknown[])[this.element];
  }
}

/**
 * A hot read query built with Kysely and compiled once per database handle and shape, then run with each
 * call's values. Building and compiling a Kysely query costs more than SQLite takes to answer the small
 * queries of an API request; the compiled SQL is the dialect's own (`?` or `$1`), so this works on SQLite
 * and PostgreSQL alike.
 *
 * `build` receives stand-ins in the place of `values` (an array value becomes an array of stand-ins of
 * the same length, so `in` lists compile once per length) and may only hand them to the query builder,
 * never look at them. Whatever changes the SQL text other than the values goes into `shape`, which
 * `shapeKey` names.
 */
export function compiledShapedQuery<S, V extends readonly unknown[], R>(
  build: (db: Db, shape: S, ...values: V) => Compilable<R>,
  shapeKey: (shape: S) => string = () => '',
): (db: Db, shape: S, ...values: V) => Promise<R[]> {
  // Keyed by handle: a transaction is its own handle (rare on read paths), the server's is long-lived.
  const compiled = new WeakMap<Db, Map<string, CompiledQuery<R>>>();
  return async (db, shape, ...values) => {
    const lengths = values.map((value) => (Array.isArray(value) ? value.length : '')).join(',');
    const key = `${shapeKey(shape)}|${lengths}`;
    let byKey = compiled.get(db);
    if (!byKey) {
      byKey = new Map();
      compiled.set(db, byKey);
    }
    let query = byKey.get(key);
    if (!query) {
      const slots = values.map((value, arg) =>
        Array.isArray(value) ? value.map((_, element) => new Slot(arg, element)) : new Slot(arg, -1),
      );
      query = build(db, shape, ...(slots as unknown as V)).compile();
      // Long lists are compiled per call: one kept query per length stays bounded that way.
      if (!values.some((value) => Array.isArray(value) && value.length > MAX_KEPT_LIST))
        byKey.set(key, query);
    }
    const parameters = query.parameters.map((p) => (p instanceof Slot ? p.valueIn(values) : p));
    const result = await db.executeQuery<R>({ ...query, parameters });
    return result.rows;
  };
}

/** `compiledShapedQuery` for a query whose SQL text depends on nothing but the number of values. */
export function compiledQuery<V extends readonly unknown[], R>(
  build: (db: Db, ...values: V) => Compilable<R>,
): (db: Db, ...values: V) => Promise<R[]> {
  const run = compiledShapedQuery((db, _shape: null, ...values: V) => build(db, ...values));
  return (db, ...values) => run(db, null, ...values);
}
