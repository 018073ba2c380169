/**
 * Table shapes: webhooks, their deliveries (the outbox) and the journal of ref writes not yet announced.
 * Part of ../schema.ts.
 */

import type { DefaultFlag, DefaultNumber, DefaultText, Flag, Id } from './columns.js';

/** `webhook.content_type` values (Gitea's HookContentType). */
export const HookContentType = { Json: 1, Form: 2 } as const;

/** `webhook.last_status` values (Gitea's HookStatus). */
export const HookStatus = { None: 0, Succeed: 1, Fail: 2 } as const;

/** A webhook of a repository (`repo_id`), a user or organization (`owner_id`), or the whole site. */
export interface WebhookTable {
  id: Id;
  repo_id: DefaultNumber;
  owner_id: DefaultNumber;
  is_system_webhook: DefaultFlag;
  /** Who created it: deliveries re-check that this user still administers the hook's target. */
  creator_id: number;
  type: string;
  url: string;
  http_method: DefaultText;
  content_type: DefaultNumber;
  /** HMAC key; never returned nor logged. */
  secret: DefaultText;
  /** Sent as the Authorization header; never returned nor logged. */
  header_authorization: DefaultText;
  /** JSON array of the enabled event names (webhooks/events.ts). */
  events: string;
  branch_filter: DefaultText;
  /** JSON object of type-specific settings (Slack channel, username, icon, color); '' when none. */
  meta: DefaultText;
  is_active: DefaultFlag;
  last_status: DefaultNumber;
  consecutive_failures: DefaultNumber;
  disabled_reason: DefaultText;
  created_unix: number;
  updated_unix: number;
}

/** Where a delivery is: open (`pending`, `delivering`) or finished (`delivered`, `failed`, `dropped`). */
export type HookTaskState = 'pending' | 'delivering' | 'delivered' | 'failed' | 'dropped';

/** One delivery of one event to one hook: the outbox row, then its history. */
export interface HookTaskTable {
  id: Id;
  hook_id: number;
  repo_id: DefaultNumber;
  /** The X-Gitea-Delivery id, the same on every attempt. */
  uuid: string;
  event_type: string;
  action: DefaultText;
  /** The event's Gitea-format JSON; other hook types are rendered from it at delivery time. */
  payload_content: string;
  state: HookTaskState;
  attempts: DefaultNumber;
  /** Pending: when the next attempt is due. Delivering: when the claim lapses (a crashed claimer). */
  due_ms: number;
  is_redelivery: DefaultFlag;
  request_info: DefaultText;
  response_status: DefaultNumber;
  response_info: DefaultText;
  /** Why the last attempt failed or the delivery was dropped. */
  reason: DefaultText;
  duration_ms: DefaultNumber;
  delivered_ms: DefaultNumber;
  created_unix: number;
}

/** A ref write whose webhook events are not recorded yet (migration 015, webhooks/ref-journal.ts). */
export interface RefJournalTable {
  id: Id;
  repo_id: number;
  pusher_id: number;
  /** JSON object ref → sha before the write. */
  refs_before: string;
  /** 1: `refs_before` lists every ref (a push); 0: only the refs the write may change. */
  whole_snapshot: Flag;
  claim: string;
  lease_until_ms: number;
  created_unix: number;
}
