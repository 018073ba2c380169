/**
 * The durable outbox: a notification becomes a row per target before anything is sent, and a worker
 * sends the rows. What it promises (ARCHITECTURE.md principle 11, issue 30):
 *
 * - Recorded before sent: `enqueue` writes the rows; only rows are ever sent.
 * - One attempt at a time per target, oldest first: a target that hangs holds only its own queue, for at
 *   most its timeout; other targets, the API and the event stream never wait for it.
 * - An attempt is claimed (attempts + 1, a lease) by a conditional UPDATE before it starts; a process
 *   that dies mid-attempt leaves the lease to run out, and the row is tried again, with the same id.
 * - 2xx (or an SMTP 250) is recorded as `delivered`, and a delivered row is never claimed again.
 * - Failures that may pass (down, timeout, 5xx, 429, SMTP 4xx) wait `backoffMs` (or `Retry-After`); the
 *   whole target waits with them, so a target that comes back gets its backlog in order. After
 *   `max_attempts` the row is `failed`.
 * - Burst limit: beyond `burst.max` rows within `burst.minutes`, rows are held and, when the window ends,
 *   folded into one digest row in the same transaction.
 */

import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { NotificationPayload, PhotoSource } from './events.js';
import { SENDERS } from './kinds/senders.js';
import { type AttemptResult, backoffMs } from './rules.js';
import type { DeliveryRow, NotifyStore } from './store.js';
import { DEFAULTS, scrubbed, type Target } from './targets.js';

export interface OutboxOptions {
  store: NotifyStore;
  logger: Logger;
  /** The job photo source (cameras); `null` photos are simply not attached. */
  photoFor?: PhotoSource;
  /** How often the worker looks for due rows besides being woken (default 500 ms). */
  pollMs?: number;
}

/** Time a crashed attempt's lease outlives its timeout before the row may be tried again. */
const LEASE_MARGIN_MS = 2000;
/** Longest wait for a photo; a notification goes without one rather than late. */
const PHOTO_TIMEOUT_MS = 5000;

export function newDeliveryId(): string {
  return `msg_${randomUUID().replace(/-/g, '')}`;
}

export class Outbox {
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Per target: no attempt before this time (epoch ms), after a failure that may pass. */
  private readonly waitUntil = new Map<string, number>();
  private readonly attempts = new Set<AbortController>();
  private timer: NodeJS.Timeout | null = null;
  private sweeping: Promise<void> | null = null;
  private sweepAgain = false;
  private closed = false;

  constructor(private readonly options: OutboxOptions) {}

  start(): void {
    this.timer = setInterval(() => this.wake(), this.options.pollMs ?? 500);
    this.timer.unref();
    this.wake();
  }

  /** Stops sending; waits up to `graceMs` for attempts under way, then aborts them (they are retried later). */
  async close(graceMs = 1000): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    const settled = Promise.allSettled([this.sweeping, ...this.inFlight.values()]);
    const grace = new Promise((resolve) => setTimeout(resolve, graceMs).unref());
    await Promise.race([settled, grace]);
    for (const controller of this.attempts) controller.abort();
    await settled;
  }

  /**
   * Records `payload` for `target` (held for a digest when its burst limit is reached) and wakes the
   * worker. Resolves once the row is written.
   */
  async enqueue(
    target: Target,
    payload: NotificationPayload,
    options: { bypassBurst?: boolean } = {},
  ): Promise<DeliveryRow> {
    const { store } = this.options;
    const now = new Date();
    let holdUntil: string | null = null;
    const burst = target.settings.burst;
    if (burst && !options.bypassBurst) {
      const windowMs = burst.minutes * 60_000;
      const held = await store.heldUntil(target.id);
      if (held) holdUntil = held;
      else if (
        (await store.countSentSince(target.id, new Date(now.getTime() - windowMs).toISOString())) >= burst.max
      ) {
        holdUntil = new Date(now.getTime() + windowMs).toISOString();
      }
    }
    const row: DeliveryRow = {
      id: newDeliveryId(),
      target_id: target.id,
      target_name: target.settings.name,
      event: payload.type,
      payload: JSON.stringify(payload),
      status: 'pending',
      attempts: 0,
      next_attempt_at: now.toISOString(),
      lease_until: null,
      hold_until: holdUntil,
      response_status: null,
      response: null,
      error: null,
      created_at: now.toISOString(),
      delivered_at: null,
      digest_id: null,
    };
    await store.enqueue([row]);
    this.wake();
    return row;
  }

  /** Looks for due work now (or once more after the look under way). */
  wake(): void {
    if (this.closed) return;
    if (this.sweeping) {
      this.sweepAgain = true;
      return;
    }
    this.sweeping = (async () => {
      do {
        this.sweepAgain = false;
        await this.sweep();
      } while (this.sweepAgain && !this.closed);
    })()
      .catch((error: unknown) =>
        this.options.logger.error({ err: error }, 'notification outbox sweep failed'),
      )
      .finally(() => {
        this.sweeping = null;
      });
  }

  private async sweep(): Promise<void> {
    const { store } = this.options;
    const now = Date.now();
    await this.foldDue(new Date(now).toISOString());
    for (const targetId of await store.targetsWithDueDeliveries(new Date(now).toISOString())) {
      if (this.closed) return;
      if (this.inFlight.has(targetId) || (this.waitUntil.get(targetId) ?? 0) > now) continue;
      const run = this.deliverNext(targetId).finally(() => {
        this.inFlight.delete(targetId);
        this.wake();
      });
      this.inFlight.set(targetId, run);
    }
  }

  /** Makes the next attempt for `targetId`, if it has a due row and still exists. */
  private async deliverNext(targetId: string): Promise<void> {
    const { store, logger } = this.options;
    try {
      const target = await store.target(targetId);
      if (!target) return;
      const timeoutMs = (target.settings.timeout_seconds ?? DEFAULTS.timeout_seconds) * 1000;
      const now = Date.now();
      // The lease covers the longest an attempt can take: a photo wait (if a photo source is wired),
      // the attempt's timeout, and a margin for recording the outcome.
      const photoWait = this.options.photoFor ? PHOTO_TIMEOUT_MS : 0;
      const row = await store.claimNext(
        targetId,
        new Date(now).toISOString(),
        new Date(now + photoWait + timeoutMs + LEASE_MARGIN_MS).toISOString(),
      );
      if (!row) return;
      const result = await this.attempt(target, row, timeoutMs);
      await this.record(target, row, result);
    } catch (error) {
      logger.error({ err: error, target: targetId }, 'notification delivery failed unexpectedly');
    }
  }

  private async attempt(target: Target, row: DeliveryRow, timeoutMs: number): Promise<AttemptResult> {
    const payload = JSON.parse(row.payload) as NotificationPayload;
    const photo = await this.photo(payload);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    this.attempts.add(controller);
    try {
      return await SENDERS[target.settings.kind].send({
        id: row.id,
        payload,
        settings: target.settings,
        photo,
        signal: controller.signal,
        timeoutMs,
      });
    } catch {
      return { ok: false, retry: true, status: null, response: null, error: 'the sender failed' };
    } finally {
      clearTimeout(timer);
      this.attempts.delete(controller);
    }
  }

  private async photo(payload: NotificationPayload): Promise<Buffer | null> {
    const jobId = payload.data.job?.id;
    const { photoFor } = this.options;
    if (!photoFor || !jobId || !payload.type.startsWith('job.')) return null;
    const timeout = new Promise<null>((resolve) => setTimeout(resolve, PHOTO_TIMEOUT_MS, null).unref());
    return Promise.race([photoFor(jobId).catch(() => null), timeout]);
  }

  private async record(target: Target, row: DeliveryRow, result: AttemptResult): Promise<void> {
    const { store, logger } = this.options;
    const settings = target.settings;
    const response = result.response === null ? null : scrubbed(result.response, settings);
    if (result.ok) {
      this.waitUntil.delete(target.id);
      await store.markDelivered(row.id, new Date().toISOString(), result.status, response);
      return;
    }
    const error = scrubbed(result.error, settings);
    const maxAttempts = settings.max_attempts ?? DEFAULTS.max_attempts;
    let next: string | null = null;
    if (result.retry && row.attempts < maxAttempts) {
      const wait = backoffMs(settings, row.attempts, result.retryAfterSeconds);
      this.waitUntil.set(target.id, Date.now() + wait);
      next = new Date(Date.now() + wait).toISOString();
    }
    await store.markAttemptFailed(row.id, { status: result.status, response, error }, next);
    // The target's name and the scrubbed reason only: never its URL or any secret.
    logger.warn(
      {
        target: settings.name,
        delivery: row.id,
        attempt: row.attempts,
        status: result.status,
        error,
        retry_at: next,
      },
      next ? 'notification attempt failed; will retry' : 'notification failed',
    );
  }

  /** Folds held rows whose window ended into one digest per target. */
  private async foldDue(now: string): Promise<void> {
    const { store } = this.options;
    const held = await store.heldDue(now);
    const byTarget = new Map<string, DeliveryRow[]>();
    for (const row of held) byTarget.set(row.target_id, [...(byTarget.get(row.target_id) ?? []), row]);
    for (const [targetId, rows] of byTarget) {
      const first = rows[0] as DeliveryRow;
      const events = rows.map((row) => {
        const payload = JSON.parse(row.payload) as NotificationPayload;
        return { type: payload.type as never, timestamp: payload.timestamp, title: payload.data.title };
      });
      const payload: NotificationPayload = {
        type: 'digest',
        timestamp: now,
        data: {
          title: `${rows.length} notification${rows.length === 1 ? '' : 's'} from machine-api`,
          message: `${rows.length} event${rows.length === 1 ? '' : 's'} came in faster than this target's burst limit:`,
          machine: null,
          job: null,
          events,
        },
      };
      await store.fold(
        {
          ...first,
          id: newDeliveryId(),
          target_id: targetId,
          event: 'digest',
          payload: JSON.stringify(payload),
          attempts: 0,
          next_attempt_at: now,
          lease_until: null,
          hold_until: null,
          created_at: now,
        },
        rows.map((row) => row.id),
      );
    }
  }
}
