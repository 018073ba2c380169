/**
 * The typed client of the service's HTTP API. Paths, parameters and bodies come from `schema.d.ts`, which
 * the build generates from the service's own OpenAPI document (scripts/ui-api-types.ts); a route the
 * service does not have does not type-check here.
 */

import createClient from 'openapi-fetch';
import { apiKey, keyRefused } from '../session';
import type { components, paths } from './schema';

export type Schemas = components['schemas'];
export type Machine = Schemas['MachineInfoResponse'];
export type Job = Schemas['Job'];
export type JobStatus = Schemas['JobStatus'];
export type MachineStateName = NonNullable<Machine['state']>['state'];
export type Filament = Schemas['Filament'];
export type ErrorBody = Schemas['Error'];

/** The API lives at the root of the origin that serves the page (/ui/ is the page's own prefix). */
export const api = createClient<paths>({ baseUrl: location.origin });

api.use({
  onRequest({ request }) {
    if (apiKey.value) request.headers.set('x-api-key', apiKey.value);
    return request;
  },
  onResponse({ response }) {
    // Unknown or missing key: the page asks for one (session.ts); a valid key lacking a scope is a 403.
    if (response.status === 401) keyRefused();
    return response;
  },
});

/** An error answer of the API, with the service's own message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The API's `Error` body as an `ApiError`; anything else (a proxy's page, no body) gets a generic message. */
export function apiError(status: number, body: unknown): ApiError {
  if (typeof body === 'object' && body !== null && typeof (body as ErrorBody).message === 'string') {
    const { message, error_code } = body as ErrorBody;
    return new ApiError(status, message, error_code);
  }
  return new ApiError(status, `the service answered HTTP ${status}`);
}

/** Awaits an openapi-fetch call: its data, or an `ApiError` carrying the service's message. */
export async function must<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await call;
  } catch (error) {
    throw new ApiError(0, `the service cannot be reached (${(error as Error).message})`);
  }
  const { data, error, response } = result;
  if (!response.ok || error !== undefined) throw apiError(response.status, error);
  return data as T;
}

/** What to show for any error thrown by a call. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
