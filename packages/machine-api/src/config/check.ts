/**
 * Checking configuration values against their TypeBox schemas, with errors a person can act on: the file,
 * the table, the key, what was expected and what was found.
 */

import type { TSchema } from 'typebox';
import { Value } from 'typebox/value';

/** A configuration that cannot be used; the message says where and what was expected. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Applies defaults and checks `value` against `schema`, throwing a `ConfigError` for the first problem. */
export function checked(schema: TSchema, value: unknown, where: string): unknown {
  const withDefaults = Value.Default(schema, structuredClone(value));
  const errors = Value.Errors(schema, withDefaults);
  if (errors.length === 0) return withDefaults;
  // A failed union reports its alternatives' errors first (and TypeBox stops after a few): the
  // outermost union on the first error's path says what was expected there.
  const first = errors[0]!;
  let { pointer, schemaPath } = outermostUnion(first.schemaPath, first.instancePath);
  let expected = schemaAt(schema, schemaPath);
  if (first.keyword === 'required') {
    const name = (first.params as { requiredProperties: string[] }).requiredProperties[0] ?? '';
    pointer = `${pointer}/${name}`;
    expected = (expected?.properties as Record<string, Schema> | undefined)?.[name];
  }
  const key = pointer.replace(/^\//, '').replace(/\//g, '.');
  const got = valueAt(withDefaults, pointer);
  const found = got === undefined ? 'it is missing' : `got ${JSON.stringify(got)}`;
  throw new ConfigError(`${where}: key "${key}": expected ${describeExpected(expected ?? {})}, ${found}`);
}

/**
 * Walks an error's schema path (`#/properties/a/items/anyOf/1/…`) alongside its instance path and stops at
 * the first `anyOf`, returning the path of that union and of the value it checked.
 */
function outermostUnion(schemaPath: string, instancePath: string): { pointer: string; schemaPath: string[] } {
  const schemaParts = schemaPath.split('/').slice(1);
  const instanceParts = instancePath.split('/').slice(1);
  const unionAt = schemaParts.indexOf('anyOf');
  if (unionAt === -1) return { pointer: instancePath, schemaPath: schemaParts };
  let depth = 0;
  for (let i = 0; i < unionAt; i++) {
    if (schemaParts[i] === 'properties') i++;
    else if (schemaParts[i] !== 'items') continue;
    depth++;
  }
  const pointer = instanceParts
    .slice(0, depth)
    .map((part) => `/${part}`)
    .join('');
  return { pointer, schemaPath: schemaParts.slice(0, unionAt) };
}

/** A JSON schema as plain data, for describing it. */
type Schema = Record<string, unknown>;

/** The sub-schema a validation error's `schemaPath` (`#/properties/a/anyOf/0/…`) points into. */
function schemaAt(schema: TSchema, path: string[]): Schema | undefined {
  let current: unknown = schema;
  for (const part of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[
      decodeURIComponent(part.replace(/~1/g, '/').replace(/~0/g, '~'))
    ];
  }
  return current as Schema | undefined;
}

function valueAt(value: unknown, pointer: string): unknown {
  let current = value;
  for (const part of pointer.split('/').slice(1)) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

/** A person-readable description of what a schema accepts. */
export function describeExpected(schema: Schema): string {
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (Array.isArray(schema.anyOf)) {
    const options = (schema.anyOf as Schema[]).map(describeExpected);
    return options.every((o) => o.startsWith('"')) ? `one of ${options.join(', ')}` : options.join(' or ');
  }
  const bounds = [
    schema.minimum !== undefined ? `≥ ${schema.minimum}` : '',
    schema.exclusiveMinimum !== undefined ? `> ${schema.exclusiveMinimum}` : '',
    schema.maximum !== undefined ? `≤ ${schema.maximum}` : '',
  ]
    .filter(Boolean)
    .join(' and ');
  switch (schema.type) {
    case 'number':
      return bounds ? `a number ${bounds}` : 'a number';
    case 'integer':
      return bounds ? `an integer ${bounds}` : 'an integer';
    case 'string':
      return schema.pattern ? `a string matching ${schema.pattern}` : 'a string';
    case 'boolean':
      return 'true or false';
    case 'array':
      return 'an array';
    case 'object':
      return 'a table';
    default:
      return 'a valid value';
  }
}

export function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}
