/**
 * The delivery worker: claims due deliveries from the outbox (store/hooks.ts `claimHookTasks`), sends
 * each through the hook client, and records the outcome on the row it claimed. A failed attempt
 * (no answer, a timeout, a 5xx or 429) is retried with exponential backoff and jitter until
 * `[webhook] max_attempts`; every attempt keeps the delivery's X-Gitea-Delivery id.
 *
 * Crash safety: a claim is a lease (the attempt's deadline plus a margin). If the process dies while
 * sending, the lease lapses and any process claims the row again, so nothing is lost; the receiver may
 * then see that one delivery id twice, which is why the id is stable.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { ServiceContext } from '../services/context.js';
import {
  claimHookTasks,
  countOpenHookTasks,
  findWebhookById,
  finishHookTask,
  nextDueMs,
  pruneHookTasks,
  recordHookResult,
} from '../store/hooks.js';
import type { HookTaskRow } from '../store/schema.js';
import { UserType } from '../store/schema.js';
import { findUserById } from '../store/users.js';
import { deliveryRefusal } from './delivery-access.js';
import { createHookClient, type HookClient, type HookHttpResult } from './hook-client.js';
import { buildHookRequest, installationTargetType } from './hook-request.js';
import { parseHostAllowList } from './host-allow-list.js';
import { deliveryAttempts, deliveryLatency, outboxDepth } from './metrics.js';
import { onDeliveryWake } from './outbox.js';
import { repairRefJournal } from './ref-journal.js';

/** Deliveries sent at once by one process. */
const BATCH = 8;
/** Growth of the retry delay: with the default 10 s base, 8 attempts span about a day. */
const BACKOFF_FACTOR = 4.3;
/** Bytes of an answer kept in the history. */
const EXCERPT_BYTES = 8 * 1024;
const PRUNE_EVERY_MS = 10 * 60 * 1000;

/** Delay before retry number `failedAttempts` (1 = first retry): base·4.3^(n-1), ±20 % jitter. */
export function retryDelayMs(baseMs: number, failedAttempts: number, random = Math.random): number {
  const jitter = 0.8 + 0.4 * random();
  return Math.round(baseMs * BACKOFF_FACTOR ** (failedAttempts - 1) * jitter);
}

/** Whether an attempt's result is worth another try. */
export function isRetryable(result: HookHttpResult): boolean {
  if (result.refused) return false;
  return result.status === 0 || result.status >= 500 || result.status === 429;
}

export interface DeliveryWorker {
  stop(): Promise<void>;
}

/**
 * The delivery loop and its state (wake-ups, prune and repair clocks, the stop flag) in one closure, so that
 * `stop()` can end it between deliveries.
 */
export function startDeliveryWorker(ctx: ServiceContext, logger: FastifyBaseLogger): DeliveryWorker {
  const settings = ctx.config.webhook;
  const client: HookClient = createHookClient({
    allowList: parseHostAllowList(settings.allowedHostList),
    skipTlsVerify: settings.skipTlsVerify,
    timeoutMs: settings.deliverTimeoutMs,
  });
  const leaseMs = settings.deliverTimeoutMs + 5_000;
  let stopped = false;
  let wake: (() => void) | null = null;
  // A wake-up while the loop is busy is remembered, so the next sleep is skipped.
  let woken = false;
  let lastPrune = 0;
  let lastRepair = 0;
  // Journalled git writes are looked at twice per lease, so a crashed holder's events wait at most
  // about one and a half leases.
  const repairEveryMs = Math.max(settings.pollIntervalMs, settings.pushLeaseMs / 2);
  const removeWake = onDeliveryWake(() => {
    woken = true;
    wake?.();
  });

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (woken) {
        woken = false;
        resolve();
        return;
      }
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = null;
        woken = false;
        resolve();
      }
      wake = done;
    });

  async function deliver(task: HookTaskRow): Promise<void> {
    const hook = await findWebhookById(ctx.db, task.hook_id);
    if (!hook) {
      await finishHookTask(ctx.db, task, {
        state: 'dropped',
        reason: 'the hook was deleted',
        due_ms: Date.now(),
      });
      deliveryAttempts.inc({ outcome: 'dropped' });
      return;
    }
    const refusal = await deliveryRefusal(ctx, hook, task);
    if (refusal) {
      await finishHookTask(ctx.db, task, { state: 'dropped', reason: refusal, due_ms: Date.now() });
      deliveryAttempts.inc({ outcome: 'dropped' });
      logger.info({ hook: hook.id, delivery: task.uuid, reason: refusal }, 'webhook delivery dropped');
      return;
    }
    const owner = hook.owner_id > 0 ? await findUserById(ctx.db, hook.owner_id) : undefined;
    const { request, recorded } = buildHookRequest(
      hook,
      task,
      installationTargetType(hook, owner?.type === UserType.Organization),
    );
    const result = await client.send(request);
    deliveryLatency.observe(result.durationMs / 1000);
    const succeeded = result.status >= 200 && result.status < 300;
    const retry = !succeeded && isRetryable(result) && task.attempts < settings.maxAttempts;
    const now = Date.now();
    const state = succeeded ? 'delivered' : retry ? 'pending' : 'failed';
    const recordedAttempt = await finishHookTask(ctx.db, task, {
      state,
      due_ms: retry ? now + retryDelayMs(settings.retryBaseDelayMs, task.attempts) : now,
      request_info: JSON.stringify({
        url: redactUrl(request.url),
        http_method: request.method,
        headers: recorded,
      }),
      response_status: result.status,
      response_info: JSON.stringify({ headers: result.headers, body: excerpt(result.body) }),
      reason: succeeded ? '' : result.error || `HTTP ${result.status}`,
      duration_ms: result.durationMs,
      delivered_ms: now,
    });
    deliveryAttempts.inc({
      outcome: succeeded ? 'delivered' : retry ? 'retry' : result.refused ? 'refused' : 'failed',
    });
    if (!recordedAttempt) return;
    if (state !== 'pending') {
      await recordHookResult(
        ctx.db,
        hook.id,
        succeeded,
        settings.disableAfterFailures,
        Math.floor(now / 1000),
      );
    }
    if (!succeeded) {
      logger.info(
        {
          hook: hook.id,
          delivery: task.uuid,
          attempt: task.attempts,
          status: result.status,
          error: result.error,
        },
        retry ? 'webhook delivery failed, will retry' : 'webhook delivery failed',
      );
    }
  }

  /** Announces git writes whose process died before their events were recorded (ref-journal.ts). */
  async function repairJournal(): Promise<void> {
    try {
      const repaired = await repairRefJournal(ctx);
      if (repaired > 0) logger.info({ repaired }, 'webhook events of interrupted git writes recorded');
    } catch (error) {
      logger.warn({ err: error }, 'repair of interrupted git writes failed, will retry');
    }
  }

  async function loop(): Promise<void> {
    while (!stopped) {
      try {
        const now = Date.now();
        if (now - lastPrune > PRUNE_EVERY_MS && settings.historyRetentionDays > 0) {
          lastPrune = now;
          await pruneHookTasks(ctx.db, Math.floor(now / 1000) - settings.historyRetentionDays * 86_400);
        }
        if (now - lastRepair >= repairEveryMs) {
          lastRepair = now;
          await repairJournal();
        }
        const tasks = await claimHookTasks(ctx.db, ctx.dialect, now, now + leaseMs, BATCH);
        outboxDepth.set(await countOpenHookTasks(ctx.db));
        if (tasks.length > 0) {
          await Promise.all(
            tasks.map((task) =>
              deliver(task).catch((error: unknown) =>
                logger.error({ err: error, delivery: task.uuid }, 'webhook delivery crashed'),
              ),
            ),
          );
          continue;
        }
        const due = await nextDueMs(ctx.db);
        const wait =
          due === null
            ? settings.pollIntervalMs
            : Math.max(0, Math.min(settings.pollIntervalMs, due - Date.now()));
        if (!stopped) await sleep(wait);
      } catch (error) {
        if (stopped) break;
        logger.warn({ err: error }, 'webhook outbox unavailable, retrying');
        await sleep(settings.pollIntervalMs);
      }
    }
  }

  const running = loop();
  return {
    async stop() {
      stopped = true;
      removeWake();
      wake?.();
      await running;
      await client.close();
    },
  };
}

function excerpt(body: string): string {
  const bytes = Buffer.from(body, 'utf8');
  return bytes.length <= EXCERPT_BYTES ? body : bytes.subarray(0, EXCERPT_BYTES).toString('utf8');
}

/** A URL's user-info is a credential: the history keeps the URL without it. */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.username || parsed.password) {
      parsed.username = '';
      parsed.password = '';
    }
    return parsed.href;
  } catch {
    return url;
  }
}
