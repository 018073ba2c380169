/**
 * The delivery worker: claims due deliveries from the outbox (store/hooks.ts `claimHookTasks`), sends
 * each through the hook client, and records the outcome on the row it claimed (one attempt: ./deliver.ts).
 * A failed attempt (no answer, a timeout, a 5xx or 429) is retried with exponential backoff and jitter
 * until `[webhook] max_attempts`; every attempt keeps the delivery's X-Gitea-Delivery id.
 *
 * Crash safety: a claim is a lease (the attempt's deadline plus a margin). If the process dies while
 * sending, the lease lapses and any process claims the row again, so nothing is lost; the receiver may
 * then see that one delivery id twice, which is why the id is stable.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { ServiceContext } from '../services/context.js';
import { claimHookTasks, countOpenHookTasks, nextDueMs, pruneHookTasks } from '../store/hooks.js';
import { deliver } from './deliver.js';
import { createHookClient, type HookClient } from './hook-client.js';
import { parseHostAllowList } from './host-allow-list.js';
import { outboxDepth } from './metrics.js';
import { onDeliveryWake } from './outbox.js';
import { repairRefJournal } from './ref-journal.js';

/** Deliveries sent at once by one process. */
const BATCH = 8;
const PRUNE_EVERY_MS = 10 * 60 * 1000;

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
              deliver(ctx, client, logger, task).catch((error: unknown) =>
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
