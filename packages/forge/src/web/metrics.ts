/**
 * `GET /metrics`: Prometheus metrics of this process (prom-client's default registry: the webhook
 * delivery counters of webhooks/metrics.ts and Node's process metrics), as Gitea serves them: only when
 * `[metrics] enabled = true`, and, when `[metrics] token` is set, only to a scraper that sends
 * `Authorization: Bearer <token>` (compared in constant time; anything else is 401, as Gitea answers).
 * Outside the API: no API credentials are read and the route is not in the Swagger document.
 */
import { hash, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import { collectDefaultMetrics, register } from 'prom-client';
import type { ServiceContext } from '../services/context.js';

/** Whether `header` is exactly `Bearer <token>`; both sides are hashed so their lengths leak nothing. */
function bearerMatches(header: string | undefined, token: string): boolean {
  if (header === undefined) return false;
  const given = hash('sha256', header, 'buffer');
  const wanted = hash('sha256', `Bearer ${token}`, 'buffer');
  return timingSafeEqual(given, wanted);
}

let defaultsCollected = false;

export const metricsRoutes: FastifyPluginAsync<{ ctx: ServiceContext }> = async (app, { ctx }) => {
  const { enabled, token } = ctx.config.metrics;
  if (!enabled) return;
  // Several apps in one process (tests) share the default registry: its collectors are added once.
  if (!defaultsCollected) {
    collectDefaultMetrics({ prefix: 'forge_' });
    defaultsCollected = true;
  }
  app.get('/metrics', { config: { skipApiAuth: true } }, async (request, reply) => {
    if (token !== '' && !bearerMatches(request.headers.authorization, token)) {
      return reply.code(401).type('text/plain; charset=utf-8').send('');
    }
    return reply.type(register.contentType).send(await register.metrics());
  });
};
