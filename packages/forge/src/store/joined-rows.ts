/**
 * Several tables' rows out of one joined statement. A join whose tables share column names (`id`,
 * `name`, `created_unix`, …) selects each table's columns under a prefix of its own (no prefix may be
 * the start of another table's column: `owner_` would take the repository's `owner_id`), and each
 * table's row is read back from the joined row. Hot read paths join this way so a request runs one statement
 * where it ran one per table: one round trip on PostgreSQL, one read lock and one step on SQLite.
 */
import { type AliasedRawBuilder, sql } from 'kysely';

/**
 * `columns`, checked to name every column of `Row`: a column added to the table, and so to its row
 * type, fails to compile until it is listed (a row read back without it would silently lack it).
 */
export const everyColumnOf =
  <Row>() =>
  <const C extends readonly (keyof Row & string)[]>(
    columns: C & ([Exclude<keyof Row, C[number]>] extends [never] ? unknown : never),
  ): C =>
    columns;

/** `alias.column AS prefixcolumn` for each column: one table's part of a joined select list. */
export function prefixedColumns(
  alias: string,
  columns: readonly string[],
  prefix: string,
): AliasedRawBuilder<unknown, string>[] {
  return columns.map((column) => sql.ref(`${alias}.${column}`).as(prefix + column));
}

/**
 * Reads one table's row back out of joined rows where its columns carry `prefix` (or none): undefined
 * when an outer join found no row (its id is null). Each row is filled into a copy of one template, so
 * all of them share one fast object shape, and carries no other table's columns.
 */
export function prefixedRowReader<Row>(
  columns: readonly (keyof Row & string)[],
  prefix: string,
): (joined: object) => Row | undefined {
  const keys = columns.map((column) => prefix + column);
  const template: Record<string, null> = Object.fromEntries(columns.map((column) => [column, null]));
  const idKey = `${prefix}id`;
  return (joined) => {
    const source = joined as Record<string, unknown>;
    if (source[idKey] === null || source[idKey] === undefined) return undefined;
    const row: Record<string, unknown> = { ...template };
    for (let i = 0; i < keys.length; i++) row[columns[i] as string] = source[keys[i] as string];
    return row as Row;
  };
}
