/**
 * How the wire shapes of schemas/ are written: references between shared schemas (their `$id` becomes the
 * OpenAPI component name), OpenAPI 3.0 nullability as the anchor writes it, documented enumerations and
 * tagged variants, and the translation to plain JSON Schema that request validation uses.
 */

import { type Static, type TSchema, Type } from 'typebox';

/** The `$id` of a shared schema (every schema of `sharedSchemas` has one). */
function idOf(schema: TSchema): string {
  const id = (schema as { $id?: unknown }).$id;
  if (typeof id !== 'string') throw new Error('a referenced schema needs an $id');
  return id;
}

/** `{"$ref": "<id>"}` typed as the referenced schema. */
export function ref<T extends TSchema>(schema: T) {
  return Type.Unsafe<Static<T>>({ $ref: idOf(schema) });
}

/**
 * A reference that may be null, written the OpenAPI 3.0 way the anchor writes it:
 * `{"allOf": [{"$ref": …}], "nullable": true, "description": …}`.
 */
export function nullableRef<T extends TSchema>(schema: T, description: string) {
  return Type.Unsafe<Static<T> | null>({ allOf: [{ $ref: idOf(schema) }], nullable: true, description });
}

/** A reference carrying its own description (`allOf` keeps the description next to a `$ref`). */
export function describedRef<T extends TSchema>(schema: T, description: string) {
  return Type.Unsafe<Static<T>>({ allOf: [{ $ref: idOf(schema) }], description });
}

/**
 * The same schema in plain JSON Schema for request validation: OpenAPI 3.0's `nullable` next to an
 * `allOf` reference (no `type`) becomes `anyOf: [<schema>, {type: 'null'}]`, which ajv understands.
 */
export function validationSchema<T extends TSchema>(schema: T): T {
  const convert = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(convert);
    if (typeof value !== 'object' || value === null) return value;
    const { nullable, description, $id, ...rest } = value as Record<string, unknown>;
    const converted = Object.fromEntries(Object.entries(rest).map(([key, child]) => [key, convert(child)]));
    if (nullable === true && converted.type === undefined) return { anyOf: [converted, { type: 'null' }] };
    return nullable === true ? { ...converted, nullable } : converted;
  };
  return convert(schema) as T;
}

export function nullableString(description: string) {
  return Type.Unsafe<string | null>({ type: 'string', nullable: true, description });
}

/** A string enumeration written as the anchor writes it: `oneOf` single-value enums, each documented. */
export function documentedEnum<const V extends string>(
  values: Record<V, string>,
  options: { $id: string; description: string },
) {
  return Type.Unsafe<V>({
    ...options,
    oneOf: Object.entries(values).map(([value, description]) => ({
      description,
      enum: [value],
      type: 'string',
    })),
  });
}

/** An internally tagged variant `{"<tag>": "<value>", …fields}`. */
export function taggedVariant(
  tag: string,
  value: string,
  description: string,
  fields: Record<string, unknown> = {},
) {
  return {
    description,
    properties: { ...fields, [tag]: { enum: [value], type: 'string' } },
    required: [tag],
    type: 'object',
  };
}
