import type { HookTaskRow, WebhookRow } from '../store/schema.js';
import type { HookDelivery, HookDeliveryDetail } from '../structs/hook.js';
import { bodyForType } from '../webhooks/hook-request.js';
import { rfc3339 } from './time.js';

const isoMs = (ms: number) => rfc3339(Math.floor(ms / 1000));

function parsed<T>(json: string, fallback: T): T {
  try {
    return json ? (JSON.parse(json) as T) : fallback;
  } catch {
    return fallback;
  }
}

/** A delivery as the history lists it (GitHub's delivery fields plus the outbox state). */
export function toHookDelivery(task: HookTaskRow): HookDelivery {
  return {
    id: task.id,
    guid: task.uuid,
    delivered_at: task.delivered_ms > 0 ? isoMs(task.delivered_ms) : null,
    redelivery: task.is_redelivery === 1,
    duration: task.duration_ms / 1000,
    status: task.state === 'delivered' ? 'OK' : task.reason || task.state,
    status_code: task.response_status,
    event: task.event_type,
    action: task.action || null,
    state: task.state,
    attempts: task.attempts,
    next_attempt_at: task.state === 'pending' ? isoMs(task.due_ms) : null,
    repository_id: task.repo_id > 0 ? task.repo_id : null,
  };
}

/** A delivery with its last request (as recorded, without credentials) and answer excerpt. */
export function toHookDeliveryDetail(hook: WebhookRow, task: HookTaskRow): HookDeliveryDetail {
  const request = parsed<{ url?: string; headers?: Record<string, string> }>(task.request_info, {});
  const response = parsed<{ headers?: Record<string, string>; body?: string }>(task.response_info, {});
  return {
    ...toHookDelivery(task),
    url: request.url ?? hook.url.replace(/\/\/[^@/]*@/, '//'),
    request: { headers: request.headers ?? {}, payload: parsed(bodyForType(hook, task), null) },
    response: { headers: response.headers ?? {}, payload: task.response_info ? (response.body ?? '') : null },
  };
}
