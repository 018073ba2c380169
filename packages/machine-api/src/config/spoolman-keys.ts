/**
 * The `[spoolman]` table: a Spoolman server whose spools machines print from (docs/machine-api/filament.md).
 * Absent: no Spoolman at all.
 */

import { type Static, Type } from 'typebox';
import { checked } from './check.js';

export const SpoolmanKeys = Type.Object(
  {
    /** Spoolman's base URL, e.g. `http://spoolman.local:7912` (the API is under `/api/v1`). */
    url: Type.String({ pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*)?$', maxLength: 2048 }),
    /** Grams a spool must keep beyond a job's estimate before the queue starts the job from it. */
    margin_g: Type.Number({ minimum: 0, maximum: 100_000, default: 5 }),
    /** How long one request to Spoolman may take. */
    timeout_ms: Type.Integer({ minimum: 1, maximum: 600_000, default: 10_000 }),
    /** How often the use of a print under way is reported (Moonraker reports while printing too). */
    report_interval_s: Type.Number({ minimum: 1, maximum: 86_400, default: 120 }),
  },
  { additionalProperties: false },
);

export interface SpoolmanSettings {
  /** Base URL without a trailing slash. */
  url: string;
  marginG: number;
  timeoutMs: number;
  reportIntervalMs: number;
}

/** The `[spoolman]` table, or null when there is none. */
export function parseSpoolman(value: unknown, file: string): SpoolmanSettings | null {
  if (value === undefined) return null;
  const keys = checked(SpoolmanKeys, value, `${file}: [spoolman]`) as Static<typeof SpoolmanKeys>;
  return {
    url: keys.url.replace(/\/+$/, ''),
    marginG: keys.margin_g,
    timeoutMs: keys.timeout_ms,
    reportIntervalMs: keys.report_interval_s * 1000,
  };
}
