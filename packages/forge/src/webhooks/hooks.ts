/**
 * The hooks API's rules (Gitea's routers/api/v1/utils/hook.go), for every place a hook can live:
 * a repository, a user or organization, or the site. Who may call them is decided by the routes
 * (repository admin, organization owner, the user, site administrator); these rules validate and store.
 * Stricter than Gitea where it helps: unknown event names and malformed URLs or branch filters are
 * refused with 422 instead of being stored, and the secret and authorization header are never returned.
 */
import { randomUUID } from 'node:crypto';
import { BadRequest, Conflict, Invalid, NotFound } from '../errors.js';
import { nowUnix, type ServiceContext } from '../services/context.js';
import {
  deleteWebhook,
  findHookTask,
  findWebhook,
  type HookScope,
  insertRedelivery,
  insertWebhook,
  listHookTasks,
  listWebhooks,
  updateWebhook,
} from '../store/hooks.js';
import { HookContentType, type HookTaskRow, type UserRow, type WebhookRow } from '../store/schema.js';
import type { CreateHookOption, EditHookOption } from '../structs/hook.js';
import { parseHookEvents } from './events.js';
import { compileGlob } from './glob.js';
import { HOOK_TYPES, isHookType, isValidSlackChannel } from './hook-types.js';
import { wakeDeliveryWorkers } from './outbox.js';

export type { HookScope } from '../store/hooks.js';

/** Gitea's IsValidHookContentType. */
function contentTypeOf(name: string): number {
  if (name === 'json') return HookContentType.Json;
  if (name === 'form') return HookContentType.Form;
  throw new Invalid('Invalid content type');
}

/** An absolute http(s) URL (a hook pointing anywhere else could never be delivered). */
function validUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Invalid(`Invalid url: ${url.slice(0, 100)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new Invalid(`Invalid url: ${url.slice(0, 100)}`);
  }
  return url;
}

function eventsJson(names: readonly string[] | undefined): string {
  const parsed = parseHookEvents(names ?? []);
  if ('unknown' in parsed) throw new Invalid(`Invalid hook event: ${parsed.unknown.slice(0, 100)}`);
  return JSON.stringify(parsed.events);
}

function branchFilterOf(filter: string | undefined): string {
  const value = filter ?? '';
  if (value !== '' && !compileGlob(value)) throw new Invalid(`Invalid branch filter: ${value.slice(0, 100)}`);
  return value;
}

/** Gitea's http_method: POST (default), or GET for gitea and gogs hooks. */
function httpMethodOf(type: string, method: string | undefined): string {
  const value = (method ?? 'POST').toUpperCase();
  if (value === 'POST' || (value === 'GET' && (type === 'gitea' || type === 'gogs'))) return value;
  throw new Invalid(`Invalid http method: ${value.slice(0, 20)}`);
}

function slackMeta(config: Record<string, string>, required: boolean): string | undefined {
  const channel = config.channel?.trim();
  if (channel === undefined) {
    if (required) throw new Invalid('Missing config option: channel');
    return undefined;
  }
  if (!isValidSlackChannel(channel)) throw new BadRequest('Invalid slack channel name');
  return JSON.stringify({
    channel,
    username: config.username ?? '',
    icon_url: config.icon_url ?? '',
    color: config.color ?? '',
  });
}

export function listHooks(ctx: ServiceContext, scope: HookScope, page: { limit: number; offset: number }) {
  return listWebhooks(ctx.db, scope, page);
}

export async function getHook(ctx: ServiceContext, scope: HookScope, id: number): Promise<WebhookRow> {
  const hook = await findWebhook(ctx.db, scope, id);
  if (!hook) throw new NotFound();
  return hook;
}

/** Gitea's addHook, remembering the creator (whose access every delivery re-checks). */
export async function createHook(
  ctx: ServiceContext,
  scope: HookScope,
  creator: UserRow,
  input: CreateHookOption,
): Promise<WebhookRow> {
  const type = input.type.trim();
  if (!isHookType(type))
    throw new Invalid(`Invalid hook type: ${type.slice(0, 40)} (one of ${HOOK_TYPES.join(', ')})`);
  for (const name of ['url', 'content_type']) {
    if (input.config[name] === undefined) throw new Invalid(`Missing config option: ${name}`);
  }
  const contentType = contentTypeOf(input.config.content_type!);
  const url = validUrl(input.config.url!);
  const events = eventsJson(input.events);
  const branchFilter = branchFilterOf(input.branch_filter);
  const meta = type === 'slack' ? slackMeta(input.config, true) : undefined;
  const now = nowUnix();
  return insertWebhook(ctx.db, {
    repo_id: 'repoId' in scope ? scope.repoId : 0,
    owner_id: 'ownerId' in scope ? scope.ownerId : 0,
    is_system_webhook: 'system' in scope ? 1 : 0,
    creator_id: creator.id,
    type,
    url,
    http_method: httpMethodOf(type, input.config.http_method),
    content_type: contentType,
    secret: input.config.secret ?? '',
    header_authorization: input.authorization_header ?? '',
    events,
    branch_filter: branchFilter,
    meta: meta ?? '',
    is_active: input.active ? 1 : 0,
    created_unix: now,
    updated_unix: now,
  });
}

/**
 * Gitea's editHook: config keys apply when present; `events` and `branch_filter` are replaced (absent
 * events mean push, an absent filter means none), `active` applies when present. The authorization
 * header is kept when absent (the forge never returns it, so a client could not send it back).
 * Reactivating a hook clears its failure run and the reason it was disabled.
 */
export async function editHook(
  ctx: ServiceContext,
  scope: HookScope,
  id: number,
  input: EditHookOption,
): Promise<WebhookRow> {
  const hook = await getHook(ctx, scope, id);
  const config = input.config ?? {};
  const patch: Parameters<typeof updateWebhook>[2] = {
    events: eventsJson(input.events),
    branch_filter: branchFilterOf(input.branch_filter),
    updated_unix: nowUnix(),
  };
  if (config.url !== undefined) patch.url = validUrl(config.url);
  if (config.content_type !== undefined) patch.content_type = contentTypeOf(config.content_type);
  if (config.secret !== undefined) patch.secret = config.secret;
  if (config.http_method !== undefined) patch.http_method = httpMethodOf(hook.type, config.http_method);
  if (hook.type === 'slack') {
    const meta = slackMeta(config, false);
    if (meta !== undefined) patch.meta = meta;
  }
  if (input.authorization_header !== undefined) patch.header_authorization = input.authorization_header;
  if (input.active !== undefined) {
    patch.is_active = input.active ? 1 : 0;
    if (input.active) {
      patch.consecutive_failures = 0;
      patch.disabled_reason = '';
    }
  }
  await updateWebhook(ctx.db, hook.id, patch);
  return getHook(ctx, scope, id);
}

export async function removeHook(ctx: ServiceContext, scope: HookScope, id: number): Promise<void> {
  if (!(await deleteWebhook(ctx.db, scope, id))) throw new NotFound();
}

/** One page of a hook's deliveries, newest first. */
export async function listDeliveries(
  ctx: ServiceContext,
  scope: HookScope,
  hookId: number,
  page: { limit: number; offset: number },
): Promise<{ rows: HookTaskRow[]; total: number }> {
  const hook = await getHook(ctx, scope, hookId);
  return listHookTasks(ctx.db, hook.id, page);
}

export async function getDelivery(
  ctx: ServiceContext,
  scope: HookScope,
  hookId: number,
  deliveryId: number,
): Promise<{ hook: WebhookRow; task: HookTaskRow }> {
  const hook = await getHook(ctx, scope, hookId);
  const task = await findHookTask(ctx.db, hook.id, deliveryId);
  if (!task) throw new NotFound();
  return { hook, task };
}

/**
 * Sends a finished delivery again, now (GitHub's redelivery; Gitea only offers it in its web UI). As
 * Gitea's ReplayHookTask, the redelivery is a new delivery with its own id and the same payload; the
 * original stays in the history as it was. A delivery still in the outbox is already going to be
 * sent: 409.
 */
export async function redeliver(
  ctx: ServiceContext,
  scope: HookScope,
  hookId: number,
  deliveryId: number,
): Promise<HookTaskRow> {
  const { task } = await getDelivery(ctx, scope, hookId, deliveryId);
  if (task.state === 'pending' || task.state === 'delivering') {
    throw new Conflict('the delivery is still in the outbox');
  }
  const again = await insertRedelivery(ctx.db, task, randomUUID(), Date.now());
  wakeDeliveryWorkers();
  return again;
}
