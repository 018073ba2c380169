/**
 * The column types every table shape uses. Portability rules (SQLite and PostgreSQL run the same queries):
 * - ids are int64 (`integer` primary key on SQLite, `bigserial` on PostgreSQL), read back as numbers;
 * - timestamps are unix seconds in `bigint` columns named `*_unix`;
 * - booleans are `integer` 0/1 columns (better-sqlite3 cannot bind JS booleans), typed `Flag`.
 */

import type { ColumnType, Generated } from 'kysely';

export type Flag = 0 | 1;
export type Id = Generated<number>;
/** A flag column with a database default: optional on insert. */
export type DefaultFlag = ColumnType<Flag, Flag | undefined, Flag>;
export type DefaultNumber = ColumnType<number, number | undefined, number>;
export type DefaultText = ColumnType<string, string | undefined, string>;
