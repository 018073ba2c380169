/**
 * Webhooks and their deliveries (migration 013). The delivery rows are the outbox: inserted with the
 * write that raised them (callers pass their transaction), claimed by one worker at a time, finished
 * only by the claim that holds them.
 */
import { type Insertable, type Kysely, sql, type Transaction, type Updateable } from 'kysely';
import type { DialectName } from './dialect.js';
import type { Database, HookTaskRow, HookTaskTable, WebhookRow, WebhookTable } from './schema.js';

type Db = Kysely<Database> | Transaction<Database>;

/** Which hooks a route manages: a repository's, an owner's (user or organization), or the site's. */
export type HookScope = { repoId: number } | { ownerId: number } | { system: true };

function inScope<T extends { where: (...args: never[]) => T }>(query: T, scope: HookScope): T {
  // biome-ignore lint/suspicious/noExplicitAny: the three scopes are three column conditions.
  const q = query as any;
  if ('repoId' in scope) return q.where('repo_id', '=', scope.repoId).where('is_system_webhook', '=', 0);
  if ('ownerId' in scope)
    return q
      .where('owner_id', '=', scope.ownerId)
      .where('repo_id', '=', 0)
      .where('is_system_webhook', '=', 0);
  return q.where('is_system_webhook', '=', 1);
}

export async function insertWebhook(db: Db, values: Insertable<WebhookTable>): Promise<WebhookRow> {
  return db.insertInto('webhook').values(values).returningAll().executeTakeFirstOrThrow();
}

export function findWebhook(db: Db, scope: HookScope, id: number): Promise<WebhookRow | undefined> {
  return inScope(db.selectFrom('webhook').selectAll().where('id', '=', id), scope).executeTakeFirst();
}

export function findWebhookById(db: Db, id: number): Promise<WebhookRow | undefined> {
  return db.selectFrom('webhook').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listWebhooks(
  db: Db,
  scope: HookScope,
  page: { limit: number; offset: number },
): Promise<{ rows: WebhookRow[]; total: number }> {
  const rows = await inScope(db.selectFrom('webhook').selectAll(), scope)
    .orderBy('id')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  const count = await inScope(
    db.selectFrom('webhook').select((eb) => eb.fn.countAll<number>().as('n')),
    scope,
  ).executeTakeFirstOrThrow();
  return { rows, total: Number(count.n) };
}

export async function updateWebhook(db: Db, id: number, patch: Updateable<WebhookTable>): Promise<void> {
  await db.updateTable('webhook').set(patch).where('id', '=', id).execute();
}

/** Removes a hook and its delivery history; false when there was none. */
export async function deleteWebhook(db: Kysely<Database>, scope: HookScope, id: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const found = await findWebhook(trx, scope, id);
    if (!found) return false;
    await trx.deleteFrom('hook_task').where('hook_id', '=', id).execute();
    await trx.deleteFrom('webhook').where('id', '=', id).execute();
    return true;
  });
}

/** Removes the hooks of a deleted repository, or of a deleted user or organization, with their history. */
export async function deleteWebhooksOf(db: Db, target: { repoId: number } | { ownerId: number }) {
  const ids = db
    .selectFrom('webhook')
    .select('id')
    .where(
      'repoId' in target ? 'repo_id' : 'owner_id',
      '=',
      'repoId' in target ? target.repoId : target.ownerId,
    );
  await db.deleteFrom('hook_task').where('hook_id', 'in', ids).execute();
  await db
    .deleteFrom('webhook')
    .where(
      'repoId' in target ? 'repo_id' : 'owner_id',
      '=',
      'repoId' in target ? target.repoId : target.ownerId,
    )
    .execute();
}

/** Active hooks an event of a repository reaches: the repository's, its owner's and the site's. */
export function hooksForRepository(db: Db, repoId: number, ownerId: number): Promise<WebhookRow[]> {
  return db
    .selectFrom('webhook')
    .selectAll()
    .where('is_active', '=', 1)
    .where((eb) =>
      eb.or([
        eb('repo_id', '=', repoId),
        eb.and([eb('owner_id', '=', ownerId), eb('repo_id', '=', 0)]),
        eb('is_system_webhook', '=', 1),
      ]),
    )
    .orderBy('id')
    .execute();
}

export async function insertHookTasks(
  db: Db,
  rows: Array<Insertable<HookTaskTable>>,
): Promise<HookTaskRow[]> {
  if (rows.length === 0) return [];
  return db.insertInto('hook_task').values(rows).returningAll().execute();
}

/**
 * Claims up to `limit` due deliveries for this process: pending ones whose time has come and ones
 * whose claimer's lease lapsed (it crashed). Each claim counts an attempt and holds the row until
 * `leaseUntilMs`. On PostgreSQL concurrent claimers skip each other's rows (FOR UPDATE SKIP LOCKED),
 * so a row is claimed once; SQLite has one writer at a time.
 */
export async function claimHookTasks(
  db: Kysely<Database>,
  dialect: DialectName,
  nowMs: number,
  leaseUntilMs: number,
  limit: number,
): Promise<HookTaskRow[]> {
  let due = db
    .selectFrom('hook_task')
    .select('id')
    .where('state', 'in', ['pending', 'delivering'])
    .where('due_ms', '<=', nowMs)
    .orderBy('due_ms')
    .limit(limit);
  if (dialect === 'postgres') due = due.forUpdate().skipLocked();
  return db
    .updateTable('hook_task')
    .set({ state: 'delivering', due_ms: leaseUntilMs, attempts: sql`attempts + 1` })
    .where('id', 'in', due)
    .returningAll()
    .execute();
}

/** What one attempt leaves on its row. */
export type HookTaskOutcome = Pick<
  Updateable<HookTaskTable>,
  | 'state'
  | 'due_ms'
  | 'request_info'
  | 'response_status'
  | 'response_info'
  | 'reason'
  | 'duration_ms'
  | 'delivered_ms'
>;

/**
 * Records an attempt's outcome, only if this claim still holds the row (same attempt count, still
 * delivering): a worker whose lease lapsed cannot overwrite the row another process claimed since.
 */
export async function finishHookTask(
  db: Db,
  task: Pick<HookTaskRow, 'id' | 'attempts'>,
  outcome: HookTaskOutcome,
): Promise<boolean> {
  const result = await db
    .updateTable('hook_task')
    .set(outcome)
    .where('id', '=', task.id)
    .where('attempts', '=', task.attempts)
    .where('state', '=', 'delivering')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** A hook's run of failures after a finished delivery; deactivates it at `disableAfter` (0: never). */
export async function recordHookResult(
  db: Db,
  hookId: number,
  succeeded: boolean,
  disableAfter: number,
  nowUnix: number,
): Promise<void> {
  if (succeeded) {
    await db
      .updateTable('webhook')
      .set({ last_status: 1, consecutive_failures: 0 })
      .where('id', '=', hookId)
      .execute();
    return;
  }
  await db
    .updateTable('webhook')
    .set({ last_status: 2, consecutive_failures: sql`consecutive_failures + 1` })
    .where('id', '=', hookId)
    .execute();
  if (disableAfter > 0) {
    await db
      .updateTable('webhook')
      .set({
        is_active: 0,
        disabled_reason: `deactivated after ${disableAfter} consecutive failed deliveries`,
        updated_unix: nowUnix,
      })
      .where('id', '=', hookId)
      .where('is_active', '=', 1)
      .where('consecutive_failures', '>=', disableAfter)
      .execute();
  }
}

export async function listHookTasks(
  db: Db,
  hookId: number,
  page: { limit: number; offset: number },
): Promise<{ rows: HookTaskRow[]; total: number }> {
  const rows = await db
    .selectFrom('hook_task')
    .selectAll()
    .where('hook_id', '=', hookId)
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  const count = await db
    .selectFrom('hook_task')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('hook_id', '=', hookId)
    .executeTakeFirstOrThrow();
  return { rows, total: Number(count.n) };
}

export function findHookTask(db: Db, hookId: number, id: number): Promise<HookTaskRow | undefined> {
  return db
    .selectFrom('hook_task')
    .selectAll()
    .where('hook_id', '=', hookId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/**
 * Records a redelivery of `task`: a new delivery of the same payload, due now, with its own id (Gitea's
 * ReplayHookTask), so the history keeps every earlier attempt as it was.
 */
export async function insertRedelivery(
  db: Db,
  task: HookTaskRow,
  uuid: string,
  nowMs: number,
): Promise<HookTaskRow> {
  const [row] = await insertHookTasks(db, [
    {
      hook_id: task.hook_id,
      repo_id: task.repo_id,
      uuid,
      event_type: task.event_type,
      action: task.action,
      payload_content: task.payload_content,
      state: 'pending',
      due_ms: nowMs,
      is_redelivery: 1,
      created_unix: Math.floor(nowMs / 1000),
    },
  ]);
  return row!;
}

/** Deliveries waiting or in flight (the outbox depth). */
export async function countOpenHookTasks(db: Db): Promise<number> {
  const row = await db
    .selectFrom('hook_task')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('state', 'in', ['pending', 'delivering'])
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The earliest time an open delivery is due, if any. */
export async function nextDueMs(db: Db): Promise<number | null> {
  const row = await db
    .selectFrom('hook_task')
    .select((eb) => eb.fn.min<number>('due_ms').as('due'))
    .where('state', 'in', ['pending', 'delivering'])
    .executeTakeFirst();
  return row?.due == null ? null : Number(row.due);
}

/** Forgets finished deliveries created before `beforeUnix` (history retention). */
export async function pruneHookTasks(db: Db, beforeUnix: number): Promise<void> {
  await db
    .deleteFrom('hook_task')
    .where('state', 'not in', ['pending', 'delivering'])
    .where('created_unix', '<', beforeUnix)
    .execute();
}
