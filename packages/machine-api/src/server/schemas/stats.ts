/** Wire shapes of `GET /stats`: totals over finished jobs. */

import { Type } from 'typebox';
import { STATS_GROUPS } from '../../jobs/stats.js';
import { ref } from './refs.js';

const nullable = <T extends object>(schema: T, description: string) =>
  Type.Unsafe<string | null>({ ...schema, nullable: true, description });

export const StatsTotals = Type.Object(
  {
    prints: Type.Integer({ minimum: 0, description: 'Jobs that reached a machine and ended in the window.' }),
    completed: Type.Integer({ minimum: 0 }),
    failed: Type.Integer({ minimum: 0 }),
    cancelled: Type.Integer({ minimum: 0 }),
    success_rate: Type.Unsafe<number | null>({
      type: 'number',
      minimum: 0,
      maximum: 1,
      nullable: true,
      description: 'completed / prints, as a fraction 0–1; null without prints.',
    }),
    print_hours: Type.Number({ minimum: 0, description: 'Hours from the start of printing to the end.' }),
    grams: Type.Number({ minimum: 0, description: 'Filament used, in grams.' }),
    metres: Type.Number({ minimum: 0, description: 'Filament used, in metres.' }),
    cost: Type.Number({ minimum: 0, description: 'Cost of the filament used, in `currency`.' }),
  },
  { $id: 'StatsTotals', description: 'Totals over a set of finished jobs.' },
);

export const Stats = Type.Object(
  {
    from: nullable(
      { type: 'string', format: 'date-time' },
      'Start of the window (inclusive); null: no start.',
    ),
    to: nullable({ type: 'string', format: 'date-time' }, 'End of the window (exclusive); null: no end.'),
    group_by: Type.Unsafe<string | null>({
      type: 'string',
      enum: [...STATS_GROUPS],
      nullable: true,
      description: 'How `groups` are formed; null when not asked.',
    }),
    currency: nullable(
      { type: 'string' },
      'The currency of `cost` (`[filament] currency`); null when not configured.',
    ),
    total: ref(StatsTotals),
    groups: Type.Array(
      Type.Object({
        key: Type.String({
          description:
            'The machine id, the material (`unknown` when not known) or the UTC day (`2026-11-27`).',
        }),
        totals: ref(StatsTotals),
      }),
      { description: 'One entry per machine, material or day, sorted by key; empty without `group_by`.' },
    ),
  },
  {
    $id: 'Stats',
    description: 'Prints, success rate, print hours, filament and cost over jobs finished in a window.',
  },
);

export const StatsQuery = Type.Object({
  from: Type.Optional(
    Type.String({
      format: 'date-time',
      maxLength: 40,
      description: 'Only jobs finished at or after this time (RFC 3339).',
    }),
  ),
  to: Type.Optional(
    Type.String({
      format: 'date-time',
      maxLength: 40,
      description: 'Only jobs finished before this time (RFC 3339).',
    }),
  ),
  group_by: Type.Optional(
    Type.Unsafe<(typeof STATS_GROUPS)[number]>({
      type: 'string',
      enum: [...STATS_GROUPS],
      description: 'Totals per machine, per material or per UTC day, besides the overall total.',
    }),
  ),
});
