/**
 * Who gets what and when to try again: pure functions, so every rule of the issue is tested without a
 * clock or a network.
 */

import { type NotifyEvent, URGENT_EVENTS } from './events.js';
import { DEFAULTS, type TargetSettings } from './targets.js';

/** Whether the target wants `event` about `machineId` (`tagsOf` gives a machine's configured tags). */
export function wants(
  settings: TargetSettings,
  event: NotifyEvent,
  machineId: string | null,
  tagsOf: (machineId: string) => readonly string[],
): boolean {
  if (settings.enabled === false) return false;
  if (settings.events && !settings.events.includes(event)) return false;
  if (settings.machines && machineId !== null) {
    const names = new Set([machineId, ...tagsOf(machineId)]);
    if (!settings.machines.some((entry) => names.has(entry))) return false;
  }
  return true;
}

/** Minutes since local midnight of `at` in `timeZone`. */
function localMinutes(at: Date, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(at);
  const value = (type: string) => Number(parts.find((part) => part.type === type)?.value ?? 0);
  return value('hour') * 60 + value('minute');
}

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** Whether `at` falls in the target's quiet hours (`start` inclusive, `end` exclusive; may span midnight). */
export function inQuietHours(settings: TargetSettings, at: Date): boolean {
  const quiet = settings.quiet_hours;
  if (!quiet) return false;
  const now = localMinutes(at, quiet.timezone);
  const start = minutesOf(quiet.start);
  const end = minutesOf(quiet.end);
  return start < end ? now >= start && now < end : now >= start || now < end;
}

/** Whether quiet hours let `event` through at `at`: only failures and a machine going offline do. */
export function passesQuietHours(settings: TargetSettings, event: NotifyEvent, at: Date): boolean {
  return !inQuietHours(settings, at) || URGENT_EVENTS.includes(event);
}

/** The outcome of one attempt, as the senders report it. */
export type AttemptResult =
  | { ok: true; status: number | null; response: string | null }
  | {
      ok: false;
      /** Whether trying again may help (down, timeout, 5xx, 429); false for e.g. a 400 or 404. */
      retry: boolean;
      status: number | null;
      response: string | null;
      error: string;
      /** Seconds the receiver asked to wait (`Retry-After`). */
      retryAfterSeconds?: number;
    };

/** Whether an HTTP status is worth retrying. */
export function retryableStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || status >= 500;
}

/** Longest wait between two attempts, whatever `Retry-After` asks. */
export const MAX_BACKOFF_MS = 60 * 60 * 1000;

/**
 * When to try again after `attempts` failed attempts: the receiver's `Retry-After` when it gave one,
 * otherwise `retry_seconds` doubled per attempt, with ±20 % jitter so that many deliveries to a target
 * that comes back do not all arrive in the same instant; never more than an hour.
 */
export function backoffMs(
  settings: TargetSettings,
  attempts: number,
  retryAfterSeconds?: number,
  random = Math.random(),
): number {
  if (retryAfterSeconds !== undefined) return Math.min(MAX_BACKOFF_MS, Math.max(0, retryAfterSeconds * 1000));
  const base = (settings.retry_seconds ?? DEFAULTS.retry_seconds) * 1000 * 2 ** Math.max(0, attempts - 1);
  return Math.min(MAX_BACKOFF_MS, base * (0.8 + 0.4 * random));
}

/** `Retry-After` as seconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  if (/^\d+$/.test(text.trim())) return Number(text.trim());
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000);
}
