/** What every route module is given, and the response helpers they share. */

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { TSchema } from 'typebox';
import type { JobRunner } from '../jobs/runner.js';
import type { MachineRegistry } from '../machines/registry.js';
import type { ServiceMetrics } from '../metrics.js';
import { ErrorSchema, ref } from './schemas.js';

export type TypedApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export interface ServerContext {
  machines: MachineRegistry;
  metrics: ServiceMetrics;
  /** How long a machine may take to report its status before it is listed as offline. */
  statusTimeoutMs: number;
  jobs: JobRunner;
  /** Largest accepted `file` part of `POST /print`, in bytes. */
  maxUploadBytes: number;
}

/** A 200 JSON response documented as the anchor documents it. */
export function ok<T extends TSchema>(schema: T) {
  return { description: 'successful operation', content: { 'application/json': { schema } } };
}

/** Every operation declares `Error` for all 4XX and 5XX statuses. */
export const errorResponses = {
  '4xx': { description: 'Error', content: { 'application/json': { schema: ref(ErrorSchema) } } },
  '5xx': { description: 'Error', content: { 'application/json': { schema: ref(ErrorSchema) } } },
};
