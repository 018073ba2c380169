/**
 * Text no handler should ever see: NUL characters (PostgreSQL cannot store them, git cannot take them
 * in an argument) and lone UTF-16 surrogates (no UTF-8 encoding exists, so git and the database would
 * each store something else than was sent). Refused at the edge, before authentication, lookups or git:
 * - a path segment holding such text names nothing that can exist: 404, as any unknown name;
 * - a query value or a JSON string holding it: 422 naming the field, in Gitea's binding format.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isCleanText } from '../clean-text.js';
import { Invalid, NotFound } from '../errors.js';
import { goFieldName } from './errors.js';

/** The JSON path of the first string (or key) in `value` that is not clean text, or null. */
function firstUncleanPath(value: unknown, path: string[], depth = 0): string[] | null {
  if (typeof value === 'string') return isCleanText(value) ? null : path;
  // Bodies are bounded by the body limit; the depth bound keeps a pathological nesting cheap.
  if (value === null || typeof value !== 'object' || depth > 64) return null;
  for (const [key, item] of Object.entries(value)) {
    const here = [...path, key];
    if (!isCleanText(key)) return here;
    const found = firstUncleanPath(item, here, depth + 1);
    if (found) return found;
  }
  return null;
}

function invalidField(path: string[]): Invalid {
  return new Invalid(`[${goFieldName(path[0] ?? '')}]: invalid characters (NUL or lone surrogate)`);
}

/** Installs the guards: params and query on every request, the JSON body once it is parsed. */
export function installInputGuards(app: FastifyInstance): void {
  // A callback hook: it never waits, and an async one costs every request a promise and a tick.
  app.addHook('onRequest', (request: FastifyRequest, _reply, done) => {
    for (const value of Object.values((request.params ?? {}) as Record<string, unknown>)) {
      if (typeof value === 'string' && !isCleanText(value)) return done(new NotFound());
    }
    const query = (request.query ?? {}) as Record<string, unknown>;
    const path = firstUncleanPath(query, []);
    done(path ? invalidField(path) : undefined);
  });
  app.addHook('preValidation', async (request: FastifyRequest) => {
    const path = firstUncleanPath(request.body, []);
    if (path) throw invalidField(path);
  });
}
