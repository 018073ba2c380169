import pg from 'pg';
// pg's own mapping of JavaScript values to Bind parameters (dates, arrays, buffers, JSON), as its
// Query uses it; pg exports its lib/ modules for this kind of use.
import pgUtils from 'pg/lib/utils.js';

const { prepareValue } = pgUtils;

/**
 * What pg's Result keeps of a statement's RowDescription to turn data rows into objects: the fields,
 * a type parser per column and the empty row every row object is copied from (pg 8 internals).
 */
interface RowShape {
  fields: unknown[];
  _parsers: unknown[] | undefined;
  _prebuiltEmptyResultObject: object | null;
}

/** The parts of pg's Query and Connection this module works with (pg 8; not in pg's type declarations). */
interface QueryInternals {
  name: string;
  values: unknown[];
  _result: RowShape;
  _accumulateRows: boolean;
  callback: (error: Error | null, result: pg.QueryResult) => void;
}
interface ConnectionInternals {
  bind(config: { statement: string; values: unknown[]; valueMapper: typeof prepareValue }): void;
  execute(config: object): void;
  sync(): void;
}

/** Row shapes of one connection's named statements, by statement name. */
export type RowShapes = Map<string, RowShape>;

const Query = pg.Query as unknown as new (text: string, values: unknown[]) => object;

/**
 * Whether this pg has the internals the short path below relies on. The lockfile pins a pg that has
 * them; should an upgrade move them, every statement takes pg's own path (Describe on every run) and
 * stays correct, only slower.
 */
const internalsPresent = (() => {
  const prototype = Query.prototype as Partial<Record<string, unknown>>;
  return (
    typeof prototype.prepare === 'function' &&
    typeof prototype.handleRowDescription === 'function' &&
    typeof prepareValue === 'function'
  );
})();

/** The row shape pg built for `result`, when it looks as this module expects (see internalsPresent). */
function rowShapeOf(result: RowShape): RowShape | undefined {
  const { fields, _parsers, _prebuiltEmptyResultObject } = result;
  if (!Array.isArray(fields) || !Array.isArray(_parsers) || _parsers.length !== fields.length)
    return undefined;
  if (typeof _prebuiltEmptyResultObject !== 'object' || _prebuiltEmptyResultObject === null) return undefined;
  return { fields, _parsers, _prebuiltEmptyResultObject };
}

/**
 * pg's Query of a named prepared statement that asks for the statement's row description only on its
 * first run on a connection. pg sends Bind, Describe, Execute and Sync on every run; the backend then
 * builds a RowDescription for every column and pg rebuilds its type parsers and row template from it,
 * which for the joined rows of the hot reads (60-odd columns) costs more CPU in both processes than
 * the rows themselves. A statement's columns cannot change under its name: after a schema change
 * PostgreSQL refuses to run it ("cached plan must not change result type"), so a shape recorded once
 * per connection stays right for that connection's life.
 */
class DescribedOnceQuery extends Query {
  constructor(
    text: string,
    values: unknown[],
    private readonly shapes: RowShapes,
  ) {
    super(text, values);
  }

  prepare(connection: ConnectionInternals): void {
    const self = this as unknown as QueryInternals;
    const shape = this.shapes.get(self.name);
    if (shape) {
      try {
        connection.bind({ statement: self.name, values: self.values, valueMapper: prepareValue });
      } catch {
        // A value pg cannot send: pg's own path reports the error and keeps the connection in step.
        (Query.prototype as unknown as { prepare(c: unknown): void }).prepare.call(this, connection);
        return;
      }
      const result = self._result;
      result.fields = shape.fields;
      result._parsers = shape._parsers;
      result._prebuiltEmptyResultObject = shape._prebuiltEmptyResultObject;
      // pg sets this when a row description arrives; with a callback every row is kept.
      self._accumulateRows = true;
      connection.execute({});
      connection.sync();
      return;
    }
    (Query.prototype as unknown as { prepare(c: unknown): void }).prepare.call(this, connection);
  }

  handleRowDescription(message: unknown): void {
    (Query.prototype as unknown as { handleRowDescription(m: unknown): void }).handleRowDescription.call(
      this,
      message,
    );
    const self = this as unknown as QueryInternals;
    const shape = rowShapeOf(self._result);
    if (shape) this.shapes.set(self.name, shape);
  }
}

/** Runs named statement `name` (`text`) on `client`, describing its rows only on the first run there. */
export function queryDescribedOnce(
  client: pg.ClientBase,
  shapes: RowShapes,
  name: string,
  text: string,
  values: unknown[],
): Promise<pg.QueryResult> {
  if (!internalsPresent) return client.query({ name, text, values });
  return new Promise((resolve, reject) => {
    const query = new DescribedOnceQuery(text, values, shapes) as unknown as QueryInternals;
    query.name = name;
    query.callback = (error, result) => (error ? reject(error) : resolve(result));
    client.query(query as unknown as pg.Submittable);
  });
}
