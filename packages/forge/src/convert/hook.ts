import type { WebhookRow } from '../store/schema.js';
import { HookContentType } from '../store/schema.js';
import type { Hook } from '../structs/hook.js';
import { storedHookEvents } from '../webhooks/events.js';
import { slackMetaOf } from '../webhooks/hook-types.js';
import { rfc3339 } from './time.js';

/** Gitea's `ToHook`: config carries url, content_type and http_method (and Slack's settings), no secret. */
export function toHook(row: WebhookRow): Hook {
  const config: Record<string, string> = {
    url: row.url,
    content_type: row.content_type === HookContentType.Form ? 'form' : 'json',
    http_method: row.http_method,
  };
  if (row.type === 'slack') {
    const meta = slackMetaOf(row);
    config.channel = meta.channel;
    config.username = meta.username;
    config.icon_url = meta.icon_url;
    config.color = meta.color;
  }
  return {
    id: row.id,
    type: row.type,
    branch_filter: row.branch_filter,
    config,
    events: storedHookEvents(row.events),
    authorization_header: '',
    active: row.is_active === 1,
    updated_at: rfc3339(row.updated_unix),
    created_at: rfc3339(row.created_unix),
    consecutive_failures: row.consecutive_failures,
    disabled_reason: row.disabled_reason,
  };
}
