/**
 * A client that checks every response against the OpenAPI document the service itself serves at `GET /`:
 * the operation must exist (or the answer must be the `Error` of a 404/405), the body must match the
 * documented schema for its status, `x-request-id` must be a UUID and equal the error body's `request_id`.
 */

import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import { expect } from 'vitest';

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsPlugin as unknown as (ajv: Ajv) => Ajv;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** OpenAPI 3.0 `nullable` → JSON Schema, so ajv checks what the document means. */
function toJsonSchema(value: Json): Json {
  if (Array.isArray(value)) return value.map(toJsonSchema);
  if (typeof value !== 'object' || value === null) return value;
  const { nullable, ...rest } = value;
  const converted: JsonObject = {};
  for (const [key, child] of Object.entries(rest)) converted[key] = toJsonSchema(child as Json);
  if (nullable !== true) return converted;
  if (typeof converted.type === 'string') {
    return {
      ...converted,
      type: [converted.type, 'null'],
      ...(converted.enum ? { enum: [...(converted.enum as Json[]), null] } : {}),
    };
  }
  const { description, ...schema } = converted;
  return { ...(description !== undefined ? { description } : {}), anyOf: [schema, { type: 'null' }] };
}

export interface CheckedResponse<T = unknown> {
  status: number;
  headers: Headers;
  /** Parsed JSON body (undefined for non-JSON bodies). */
  body: T;
  text: string;
}

export class ContractClient {
  private readonly ajv: Ajv;
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly templates: { template: string; pattern: RegExp }[];

  private constructor(
    readonly baseUrl: string,
    readonly document: JsonObject,
  ) {
    this.ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(this.ajv);
    for (const format of ['double', 'uint', 'binary']) this.ajv.addFormat(format, true);
    this.ajv.addSchema(toJsonSchema({ components: document.components ?? {} }) as object, 'openapi');
    this.templates = Object.keys(document.paths as JsonObject).map((template) => ({
      template,
      pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    }));
  }

  /** Fetches the served document and builds validators from it. */
  static async create(baseUrl: string): Promise<ContractClient> {
    const response = await fetch(`${baseUrl}/`);
    expect(response.status).toBe(200);
    return new ContractClient(baseUrl, (await response.json()) as JsonObject);
  }

  /** Sends a request and checks the answer against the document; returns it for the test's own asserts. */
  async request<T = unknown>(
    method: string,
    path: string,
    init: RequestInit = {},
  ): Promise<CheckedResponse<T>> {
    const response = await fetch(`${this.baseUrl}${path}`, { ...init, method });
    const text = await response.text();
    const requestId = response.headers.get('x-request-id');
    expect(requestId, `${method} ${path}: x-request-id`).toMatch(UUID);
    const isJson = (response.headers.get('content-type') ?? '').startsWith('application/json');
    const body = (isJson && text ? JSON.parse(text) : undefined) as T;

    const pathname = path.split('?')[0] ?? path;
    // Under an OctoPrint base every error is OctoPrint's `{"error"}`; the request id is in the header only.
    const octoprint = pathname.startsWith('/octoprint/');
    const errorSchema = octoprint ? '#/components/schemas/OctoPrintError' : '#/components/schemas/Error';
    const template = this.templates.find((t) => t.pattern.test(pathname))?.template;
    const operation = template
      ? ((this.document.paths as JsonObject)[template] as JsonObject)[method.toLowerCase()]
      : undefined;
    if (!operation) {
      // Not a documented operation: only a 404/405 in the Error format is acceptable.
      expect([404, 405], `${method} ${path} is not documented, answered ${response.status}`).toContain(
        response.status,
      );
      this.check(errorSchema, body, `${method} ${path}`);
    } else if (method !== 'HEAD') {
      const responses = (operation as JsonObject).responses as JsonObject;
      const declared = responses[String(response.status)] ?? responses[`${String(response.status)[0]}XX`];
      expect(declared, `${method} ${path}: status ${response.status} is not documented`).toBeDefined();
      const schemaRef = this.schemaOf(declared as JsonObject);
      if (isJson && schemaRef) this.check(schemaRef, body, `${method} ${path} → ${response.status}`);
    }
    if (response.status >= 400 && method !== 'HEAD') {
      expect(isJson, `${method} ${path}: error content-type`).toBe(true);
      if (octoprint) this.check(errorSchema, body, `${method} ${path} → ${response.status}`);
      else expect((body as { request_id?: string }).request_id).toBe(requestId);
    }
    return { status: response.status, headers: response.headers, body, text };
  }

  /** JSON pointer (into the document) of the JSON schema of a response object, following `$ref`s. */
  private schemaOf(declared: JsonObject): string | null {
    let responseObject = declared;
    let pointer = '';
    if (typeof declared.$ref === 'string') {
      pointer = declared.$ref;
      const name = declared.$ref.split('/').pop() as string;
      responseObject = ((this.document.components as JsonObject).responses as JsonObject)[name] as JsonObject;
    }
    const media = (responseObject.content as JsonObject | undefined)?.['application/json'] as
      | JsonObject
      | undefined;
    if (!media) return null;
    const schema = media.schema as JsonObject;
    if (typeof schema.$ref === 'string') return schema.$ref;
    return pointer || JSON.stringify(schema);
  }

  private check(schemaRef: string, body: unknown, where: string): void {
    let validate = this.validators.get(schemaRef);
    if (!validate) {
      // Inline schemas refer to components of the document, which ajv knows under the id `openapi`.
      const schema = schemaRef.startsWith('#')
        ? { $ref: `openapi${schemaRef}` }
        : toJsonSchema(JSON.parse(schemaRef.replaceAll('"#/components/', '"openapi#/components/')));
      validate = this.ajv.compile(schema as object);
      this.validators.set(schemaRef, validate);
    }
    const valid = validate(body);
    expect(
      valid,
      `${where}: body does not match ${schemaRef.slice(0, 120)}: ${this.ajv.errorsText(validate.errors)}\n${JSON.stringify(body)}`,
    ).toBe(true);
  }
}
