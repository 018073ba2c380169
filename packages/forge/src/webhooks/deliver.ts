/**
 * One attempt of one delivery: the hook read again (a deleted or no longer permitted hook drops it), the
 * request built and sent, and the outcome recorded on the claimed row: delivered, retried later with
 * backoff and jitter, or failed (and the hook's failure count kept). Called by the loop in ./worker.ts.
 */

import type { FastifyBaseLogger } from 'fastify';
import type { ServiceContext } from '../services/context.js';
import { findWebhookById, finishHookTask, recordHookResult } from '../store/hooks.js';
import { type HookTaskRow, UserType } from '../store/schema.js';
import { findUserById } from '../store/users.js';
import { deliveryRefusal } from './delivery-access.js';
import type { HookClient, HookHttpResult } from './hook-client.js';
import { buildHookRequest, installationTargetType } from './hook-request.js';
import { deliveryAttempts, deliveryLatency } from './metrics.js';

/** Growth of the retry delay: with the default 10 s base, 8 attempts span about a day. */
const BACKOFF_FACTOR = 4.3;
/** Bytes of an answer kept in the history. */
const EXCERPT_BYTES = 8 * 1024;

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

export async function deliver(
  ctx: ServiceContext,
  client: HookClient,
  logger: FastifyBaseLogger,
  task: HookTaskRow,
): Promise<void> {
  const settings = ctx.config.webhook;
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
    await recordHookResult(ctx.db, hook.id, succeeded, settings.disableAfterFailures, Math.floor(now / 1000));
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
