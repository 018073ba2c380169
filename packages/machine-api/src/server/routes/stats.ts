/** `GET /stats`: totals over the jobs that finished in a window. */

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { BadRequest } from '../../errors.js';
import type { Totals } from '../../jobs/stats.js';
import { ref } from '../schemas/refs.js';
import { Stats, StatsQuery } from '../schemas/stats.js';
import { errorResponses, ok, type RouteOptions } from '../types.js';
import { instant } from './jobs.js';

export const statsRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { context }) => {
  app.get(
    '/stats',
    {
      schema: {
        operationId: 'get_stats',
        summary:
          'Prints, success rate, print hours, filament and its cost over the jobs that finished in a window, overall and per machine, material or day.',
        tags: ['jobs'],
        querystring: StatsQuery,
        response: { 200: ok(ref(Stats)), ...errorResponses },
      },
    },
    async (request) => {
      const from = instant('from', request.query.from);
      const to = instant('to', request.query.to);
      if (from !== undefined && to !== undefined && from > to) {
        throw new BadRequest(`from (${request.query.from}) is after to (${request.query.to})`);
      }
      const stats = await context.stats.totals({
        ...(from !== undefined ? { from } : {}),
        ...(to !== undefined ? { to } : {}),
        ...(request.query.group_by ? { groupBy: request.query.group_by } : {}),
      });
      return {
        from: stats.from,
        to: stats.to,
        group_by: stats.groupBy,
        currency: stats.currency,
        total: wireTotals(stats.total),
        groups: stats.groups.map((group) => ({ key: group.key, totals: wireTotals(group.totals) })),
      };
    },
  );
};

function wireTotals(totals: Totals) {
  return {
    prints: totals.prints,
    completed: totals.completed,
    failed: totals.failed,
    cancelled: totals.cancelled,
    success_rate: totals.successRate,
    print_hours: totals.printHours,
    grams: totals.grams,
    metres: totals.metres,
    cost: totals.cost,
  };
}
