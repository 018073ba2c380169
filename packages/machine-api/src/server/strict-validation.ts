/**
 * Validation without coercion for JSON bodies and JSON form parts. Fastify's default validator coerces
 * (`"5"` passes as an integer), which suits query strings but not JSON, where a string priority is a
 * client bug that must be refused, not guessed at.
 */

import { Ajv, type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import { sharedSchemas, validationSchema } from './schemas.js';

const ajv = new Ajv({ coerceTypes: false, useDefaults: false, removeAdditional: false, strict: false });
// OpenAPI's numeric formats are documentation; the JSON types and minimums carry the checks.
for (const format of ['uint', 'double', 'binary', 'date-time', 'uuid']) ajv.addFormat(format, true);
// The shared schemas, so that `$ref`s to them resolve as in Fastify's own validator.
for (const schema of sharedSchemas) {
  ajv.addSchema(validationSchema(schema) as object, (schema as unknown as { $id: string }).$id);
}

const cache = new WeakMap<object, ValidateFunction>();

/** A validator for `schema` (compiled once per schema object). */
export function strictValidator(schema: object): ValidateFunction {
  let validate = cache.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    cache.set(schema, validate);
  }
  return validate;
}

/** Route option `validatorCompiler` for routes whose body is JSON. */
export const strictValidatorCompiler: FastifySchemaCompiler<unknown> = ({ schema }) =>
  strictValidator(schema as object) as unknown as ReturnType<FastifySchemaCompiler<unknown>>;
