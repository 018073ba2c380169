/**
 * The webhook outbox. `raiseHookEvents` turns events into one delivery row per hook they reach, in the
 * caller's transaction: the delivery exists exactly when the write that raised it committed, whatever
 * happens to the process afterwards. The delivery worker (worker.ts) sends the rows later.
 *
 * This is the one entry point for every module that raises events (releases, repositories, pushes over
 * smart HTTP, and any future writer such as the contents API): gather the event with the builders of
 * payloads.ts (or `preparePushEvents` of push-events.ts), then call `raiseHookEvents(trx, events)`
 * inside the transaction of the write, or `raiseHookEventsNow` when the write was not a transaction.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { hooksForRepository, insertHookTasks } from '../store/hooks.js';
import type { Database, WebhookRow } from '../store/schema.js';
import { type RaisedEvent, storedHookEvents } from './events.js';
import { branchFilterMatches } from './glob.js';
import type { HookEventRecord } from './payloads.js';

type Db = Kysely<Database> | Transaction<Database>;

/** Gitea's rule for which hooks an event reaches: subscribed, and for ref events through the branch filter. */
export function hookWantsEvent(hook: WebhookRow, event: RaisedEvent, ref: string | null): boolean {
  if (!storedHookEvents(hook.events).includes(event)) return false;
  return ref === null || branchFilterMatches(hook.branch_filter, ref);
}

/**
 * Records one delivery per (event, hook) pair in `db` (pass the transaction of the write that raised
 * the events). Returns the number of deliveries recorded.
 */
export async function raiseHookEvents(db: Db, events: readonly HookEventRecord[]): Promise<number> {
  if (events.length === 0) return 0;
  const nowMs = Date.now();
  const hooksOf = new Map<string, WebhookRow[]>();
  const rows = [];
  for (const event of events) {
    const key = `${event.repoId}/${event.ownerId}`;
    let hooks = hooksOf.get(key);
    if (!hooks) {
      hooks = await hooksForRepository(db, event.repoId, event.ownerId);
      hooksOf.set(key, hooks);
    }
    const payload = JSON.stringify(event.payload);
    for (const hook of hooks) {
      if (!hookWantsEvent(hook, event.event, event.ref)) continue;
      rows.push({
        hook_id: hook.id,
        repo_id: event.repoId,
        uuid: randomUUID(),
        event_type: event.event,
        action: event.action,
        payload_content: payload,
        state: 'pending' as const,
        due_ms: nowMs,
        created_unix: Math.floor(nowMs / 1000),
      });
    }
  }
  await insertHookTasks(db, rows);
  return rows.length;
}

/** Records events whose write has committed already (no transaction to join), then wakes the workers. */
export async function raiseHookEventsNow(db: Kysely<Database>, events: readonly HookEventRecord[]) {
  const count = await raiseHookEvents(db, events);
  if (count > 0) wakeDeliveryWorkers();
}

/** Runs `work` in a transaction and wakes this process's delivery worker once it committed. */
export async function inTransactionWithHooks<T>(
  db: Kysely<Database>,
  work: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  const result = await db.transaction().execute(work);
  wakeDeliveryWorkers();
  return result;
}

const wakeListeners = new Set<() => void>();

/** Tells this process's delivery workers that new deliveries may be due (others find them by polling). */
export function wakeDeliveryWorkers(): void {
  for (const listener of wakeListeners) listener();
}

/** Registers a worker's wake-up; returns its removal. */
export function onDeliveryWake(listener: () => void): () => void {
  wakeListeners.add(listener);
  return () => wakeListeners.delete(listener);
}
