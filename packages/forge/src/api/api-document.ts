/**
 * The forge's API document (Swagger 2.0, the format and names of Gitea's own `swagger.v1.json`), generated
 * from the routes as registered: their path, method and the TypeBox schemas they validate and serialize
 * with. Nothing here restates a wire shape: struct schemas registered in structs/definitions.ts become
 * `#/definitions/<Name>` wherever a route or another struct uses them, everything else is inlined.
 * (Gitea's names for definitions matter to clients; @fastify/swagger would need every schema rewritten
 * as `$ref`s to shared `$id`s to produce them, so the mapping is done here, over the same objects.)
 */
import type { FastifyInstance, RouteOptions } from 'fastify';
import { DEFINITIONS } from '../structs/definitions.js';
import { PARAM_TYPE_KEYWORD, type QueryType } from '../structs/query.js';
import { GITEA_COMPAT_VERSION } from '../version.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };
// biome-ignore lint/suspicious/noExplicitAny: JSON Schema objects are walked generically.
type Schema = Record<string, any>;

/** What the document needs of one route. */
export interface RouteRecord {
  method: string;
  url: string;
  schema: Schema;
}

export const API_PREFIX = '/api/v1';

/** Records every route under the API root as it is registered (call before registering routes). */
export function recordApiRoutes(app: FastifyInstance): RouteRecord[] {
  const routes: RouteRecord[] = [];
  app.addHook('onRoute', (route: RouteOptions) => {
    if (!route.url.startsWith(`${API_PREFIX}/`)) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      // HEAD routes are Fastify's automatic twins of GET routes.
      if (method === 'HEAD' || method === 'OPTIONS') continue;
      routes.push({ method: method.toLowerCase(), url: route.url, schema: (route.schema ?? {}) as Schema });
    }
  });
  return routes;
}

const definitionNames = new Map<object, string>(
  Object.entries(DEFINITIONS).map(([name, schema]) => [schema, name]),
);

/** A TypeBox (JSON Schema) schema as a Swagger 2.0 schema; registered structs become references. */
export function toSwaggerSchema(schema: Schema, self?: object): JsonObject {
  const name = definitionNames.get(schema);
  if (name && schema !== self) return { $ref: `#/definitions/${name}` };
  const out: JsonObject = {};
  if (typeof schema.description === 'string') out.description = schema.description;
  if (Array.isArray(schema.anyOf)) return Object.assign(out, unionSchema(schema.anyOf as Schema[]));
  if (schema.const !== undefined) {
    return Object.assign(out, {
      type: typeof schema.const === 'number' ? 'number' : typeof schema.const,
      enum: [schema.const],
    });
  }
  switch (schema.type) {
    case 'object': {
      out.type = 'object';
      const properties: JsonObject = {};
      for (const [key, value] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
        properties[key] = toSwaggerSchema(value);
      }
      out.properties = properties;
      if (Array.isArray(schema.required) && schema.required.length > 0) out.required = [...schema.required];
      if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
        out.additionalProperties = toSwaggerSchema(schema.additionalProperties as Schema);
      }
      return out;
    }
    case 'array':
      return Object.assign(out, { type: 'array', items: toSwaggerSchema((schema.items ?? {}) as Schema) });
    case 'null':
      // Always null on the wire (fields the forge does not back): any type fits, so none is claimed.
      return Object.assign(out, { 'x-nullable': true });
    case 'string':
    case 'integer':
    case 'number':
    case 'boolean': {
      out.type = schema.type;
      if (typeof schema.format === 'string') out.format = schema.format;
      return out;
    }
    default:
      return out;
  }
}

/** Unions: string literals become an enum; `X | null` becomes X, nullable. */
function unionSchema(members: Schema[]): JsonObject {
  const nonNull = members.filter((member) => member.type !== 'null');
  const nullable = nonNull.length < members.length;
  if (nonNull.length > 0 && nonNull.every((member) => typeof member.const === 'string')) {
    const out: JsonObject = { type: 'string', enum: nonNull.map((member) => member.const as string) };
    if (nullable) out['x-nullable'] = true;
    return out;
  }
  if (nonNull.length === 1) {
    const out = toSwaggerSchema(nonNull[0]!);
    if (nullable) out['x-nullable'] = true;
    return out;
  }
  return nullable ? { 'x-nullable': true } : {};
}

/** `/api/v1/repos/:owner/:repo/branches/*` → `/repos/{owner}/{repo}/branches/{branch}` (wildcards by title). */
function swaggerPath(url: string, params: Schema | undefined): string {
  const wildcard = (params?.properties?.['*']?.title as string | undefined) ?? 'path';
  return url
    .slice(API_PREFIX.length)
    .split('/')
    .map((segment) => {
      if (segment.startsWith(':')) return `{${segment.slice(1)}}`;
      if (segment === '*') return `{${wildcard}}`;
      return segment;
    })
    .join('/');
}

function parameter(name: string, where: 'path' | 'query', schema: Schema, required: boolean): JsonObject {
  const declared = schema[PARAM_TYPE_KEYWORD] as QueryType | undefined;
  const out: JsonObject = { type: declared?.type ?? (schema.type as string) ?? 'string' };
  if (declared?.format) out.format = declared.format;
  if (typeof schema.description === 'string') out.description = schema.description;
  out.name = name;
  out.in = where;
  if (required) out.required = true;
  return out;
}

function parametersOf(route: RouteRecord): JsonObject[] {
  const parameters: JsonObject[] = [];
  const params = route.schema.params as Schema | undefined;
  for (const [name, schema] of Object.entries((params?.properties ?? {}) as Record<string, Schema>)) {
    const documented = name === '*' ? ((schema.title as string | undefined) ?? 'path') : name;
    parameters.push(parameter(documented, 'path', schema, true));
  }
  const query = route.schema.querystring as Schema | undefined;
  const required = new Set<string>((query?.required as string[] | undefined) ?? []);
  for (const [name, schema] of Object.entries((query?.properties ?? {}) as Record<string, Schema>)) {
    parameters.push(parameter(name, 'query', schema, required.has(name)));
  }
  if (route.schema.body) {
    parameters.push({ name: 'body', in: 'body', schema: toSwaggerSchema(route.schema.body as Schema) });
  }
  return parameters;
}

function responsesOf(route: RouteRecord): JsonObject {
  const responses: JsonObject = {};
  for (const [status, schema] of Object.entries((route.schema.response ?? {}) as Record<string, Schema>)) {
    const description = (schema.description as string | undefined) ?? `HTTP ${status}`;
    responses[status] =
      schema.type === 'null' ? { description } : { description, schema: toSwaggerSchema(schema) };
  }
  // Swagger 2.0 requires one response per operation; routes that declare none answer as Gitea documents.
  if (Object.keys(responses).length === 0) responses.default = { description: 'as in the Gitea API' };
  return responses;
}

/** The whole document for the recorded routes. */
export function buildApiDocument(routes: readonly RouteRecord[]): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const route of routes) {
    if (route.schema.hide === true) continue;
    const path = swaggerPath(route.url, route.schema.params as Schema | undefined);
    const operation: JsonObject = {
      produces: ['application/json'],
      parameters: parametersOf(route),
      responses: responsesOf(route),
    };
    if (route.schema.body) operation.consumes = ['application/json'];
    if (typeof route.schema.summary === 'string') operation.summary = route.schema.summary;
    if (typeof route.schema.operationId === 'string') operation.operationId = route.schema.operationId;
    if (Array.isArray(route.schema.tags)) operation.tags = route.schema.tags as string[];
    paths[path] = { ...(paths[path] ?? {}), [route.method]: operation };
  }
  const definitions: JsonObject = {};
  for (const [name, schema] of Object.entries(DEFINITIONS))
    definitions[name] = toSwaggerSchema(schema, schema);
  return {
    consumes: ['application/json', 'text/plain'],
    produces: ['application/json', 'text/html'],
    schemes: ['http', 'https'],
    swagger: '2.0',
    info: {
      description: 'The forge speaks this subset of the Gitea API.',
      title: 'Forge API (Gitea-compatible)',
      version: GITEA_COMPAT_VERSION,
    },
    basePath: API_PREFIX,
    paths: sortKeys(paths) as JsonObject,
    definitions: sortKeys(definitions) as JsonObject,
    securityDefinitions: {
      AuthorizationHeaderToken: {
        description: 'API tokens must be prepended with "token" followed by a space.',
        type: 'apiKey',
        name: 'Authorization',
        in: 'header',
      },
      BasicAuth: { type: 'basic' },
      SudoHeader: {
        description: 'Sudo API request as the user provided as the key. Admin privileges are required.',
        type: 'apiKey',
        name: 'Sudo',
        in: 'header',
      },
    },
    security: [{ AuthorizationHeaderToken: [] }, { BasicAuth: [] }, { SudoHeader: [] }],
  };
}

function sortKeys(value: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
