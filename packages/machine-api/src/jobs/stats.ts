/**
 * Totals over the jobs that finished in a window (`GET /stats`): prints, success rate, print hours,
 * filament and its cost, overall and per machine, material or day. Every outcome counts (completed,
 * failed, cancelled); a job cancelled while it still waited in the queue never was a print and does not.
 */

import type { Job } from './job.js';
import type { JobStore } from './store.js';

export const STATS_GROUPS = ['machine', 'material', 'day'] as const;
export type StatsGroup = (typeof STATS_GROUPS)[number];

export interface Totals {
  prints: number;
  completed: number;
  failed: number;
  cancelled: number;
  /** completed / prints, null without prints. */
  successRate: number | null;
  printHours: number;
  grams: number;
  metres: number;
  cost: number;
}

export interface Stats {
  /** ISO 8601 UTC; null for an open end. */
  from: string | null;
  to: string | null;
  groupBy: StatsGroup | null;
  currency: string | null;
  total: Totals;
  groups: { key: string; totals: Totals }[];
}

export interface StatsQuery {
  from?: string;
  to?: string;
  groupBy?: StatsGroup;
}

export class JobStats {
  constructor(
    private readonly store: JobStore,
    private readonly currency: string | null,
  ) {}

  async totals(query: StatsQuery): Promise<Stats> {
    const jobs = await this.store.finishedBetween(query.from, query.to);
    const groups = new Map<string, Job[]>();
    if (query.groupBy) {
      for (const job of jobs) {
        const key = keyOf(job, query.groupBy);
        const list = groups.get(key) ?? [];
        list.push(job);
        groups.set(key, list);
      }
    }
    return {
      from: query.from ?? null,
      to: query.to ?? null,
      groupBy: query.groupBy ?? null,
      currency: this.currency,
      total: sum(jobs),
      groups: [...groups.entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([key, list]) => ({ key, totals: sum(list) })),
    };
  }
}

function keyOf(job: Job, group: StatsGroup): string {
  if (group === 'machine') return job.machineId ?? 'none';
  if (group === 'material') return job.filament?.material ?? 'unknown';
  return (job.finishedAt ?? '').slice(0, 10);
}

function sum(jobs: readonly Job[]): Totals {
  const totals: Totals = {
    prints: jobs.length,
    completed: 0,
    failed: 0,
    cancelled: 0,
    successRate: null,
    printHours: 0,
    grams: 0,
    metres: 0,
    cost: 0,
  };
  for (const job of jobs) {
    if (job.status === 'completed') totals.completed++;
    else if (job.status === 'failed') totals.failed++;
    else if (job.status === 'cancelled') totals.cancelled++;
    if (job.printingAt && job.finishedAt) {
      const ms = Date.parse(job.finishedAt) - Date.parse(job.printingAt);
      if (Number.isFinite(ms) && ms > 0) totals.printHours += ms / 3_600_000;
    }
    totals.grams += job.filament?.usedG ?? 0;
    totals.metres += job.filament?.usedM ?? 0;
    totals.cost += job.filament?.cost ?? 0;
  }
  totals.successRate = jobs.length === 0 ? null : round(totals.completed / jobs.length, 4);
  totals.printHours = round(totals.printHours, 3);
  totals.grams = round(totals.grams, 2);
  totals.metres = round(totals.metres, 3);
  totals.cost = round(totals.cost, 2);
  return totals;
}

function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
