/**
 * Validation without coercion for JSON bodies and JSON form parts. Fastify's default validator coerces
 * (`"5"` passes as an integer), which suits query strings but not JSON, where a string priority is a
 * client bug that must be refused, not guessed at.
 */

import { Ajv, type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import { octoPrintSchemas } from '../octoprint/schemas/index.js';
import { sharedSchemas } from './schemas/index.js';
import { keySchemas } from './schemas/keys.js';
import { validationSchema } from './schemas/refs.js';

/**
 * Made with the first validation, not at start-up: compiling Ajv's meta-schema and the shared schemas
 * costs tens of milliseconds that the routes using this validator need only when they are called.
 */
let instance: Ajv | undefined;

function strictAjv(): Ajv {
  if (instance) return instance;
  const ajv = new Ajv({ coerceTypes: false, useDefaults: false, removeAdditional: false, strict: false });
  // OpenAPI's numeric formats are documentation; the JSON types and minimums carry the checks.
  for (const format of ['uint', 'double', 'binary', 'date-time', 'uuid']) ajv.addFormat(format, true);
  // The shared schemas, so that `$ref`s to them resolve as in Fastify's own validator.
  for (const schema of [...sharedSchemas, ...keySchemas, ...octoPrintSchemas]) {
    ajv.addSchema(validationSchema(schema) as object, (schema as unknown as { $id: string }).$id);
  }
  instance = ajv;
  return ajv;
}

const cache = new WeakMap<object, ValidateFunction>();

/** A validator for `schema` (compiled once per schema object). */
export function strictValidator(schema: object): ValidateFunction {
  let validate = cache.get(schema);
  if (!validate) {
    validate = strictAjv().compile(schema);
    cache.set(schema, validate);
  }
  return validate;
}

/**
 * Route option `validatorCompiler` for routes whose body is JSON. Fastify asks for validators at start-up;
 * the schema is compiled with the route's first request (its errors are handed on as Fastify expects).
 */
export const strictValidatorCompiler: FastifySchemaCompiler<unknown> = ({ schema }) => {
  const validate = (data: unknown) => {
    const compiled = strictValidator(schema as object);
    const valid = compiled(data);
    validate.errors = compiled.errors;
    return valid;
  };
  validate.errors = null as ValidateFunction['errors'];
  return validate as unknown as ReturnType<FastifySchemaCompiler<unknown>>;
};
