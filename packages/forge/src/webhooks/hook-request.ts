/**
 * The HTTP request of one delivery, as Gitea's deliver.go builds it: the body for the hook's type, the
 * event and delivery headers under their Gitea, Gogs and GitHub names, and HMAC signatures of the
 * JSON payload with the hook's secret (hex, no prefix for X-Gitea-Signature; `sha1=` / `sha256=` for the
 * GitHub-style headers). A form hook sends `payload=<json>` and still signs the JSON itself.
 */
import { createHmac } from 'node:crypto';
import { HookContentType, type HookTaskRow, type WebhookRow } from '../store/schema.js';
import { discordBody, msteamsBody, slackBody } from './chat-payloads.js';
import type { HookHttpRequest } from './hook-client.js';
import { slackMetaOf } from './hook-types.js';

/** Where a hook is defined, as X-Gitea-Hook-Installation-Target-Type tells it. */
export function installationTargetType(hook: WebhookRow, ownerIsOrganization: boolean): string {
  if (hook.is_system_webhook === 1) return 'system';
  if (hook.repo_id > 0) return 'repository';
  return ownerIsOrganization ? 'organization' : 'user';
}

/** The JSON the hook's type receives for the stored (Gitea-format) payload. */
export function bodyForType(
  hook: WebhookRow,
  task: Pick<HookTaskRow, 'event_type' | 'payload_content'>,
): string {
  switch (hook.type) {
    case 'slack':
      return JSON.stringify(slackBody(task.event_type, JSON.parse(task.payload_content), slackMetaOf(hook)));
    case 'discord':
      return JSON.stringify(discordBody(task.event_type, JSON.parse(task.payload_content)));
    case 'msteams':
      return JSON.stringify(msteamsBody(task.event_type, JSON.parse(task.payload_content)));
    default:
      // gitea and gogs receive the payload as stored.
      return task.payload_content;
  }
}

/** Headers that carry credentials; they never reach the delivery history. */
const SECRET_HEADERS = new Set(['authorization']);

/** Builds the request; `recorded` is the same request with credentials removed, for the history. */
export function buildHookRequest(
  hook: WebhookRow,
  task: Pick<HookTaskRow, 'uuid' | 'event_type' | 'payload_content'>,
  targetType: string,
): { request: HookHttpRequest; recorded: Record<string, string> } {
  const json = bodyForType(hook, task);
  const sign = (algorithm: 'sha1' | 'sha256') =>
    hook.secret ? createHmac(algorithm, hook.secret).update(json).digest('hex') : '';
  const sha256 = sign('sha256');
  const event = task.event_type;
  const headers: Record<string, string> = {
    'X-Gitea-Delivery': task.uuid,
    'X-Gitea-Event': event,
    'X-Gitea-Event-Type': event,
    'X-Gitea-Signature': sha256,
    'X-Gitea-Hook-Installation-Target-Type': targetType,
    'X-Gogs-Delivery': task.uuid,
    'X-Gogs-Event': event,
    'X-Gogs-Event-Type': event,
    'X-Gogs-Signature': sha256,
    'X-Hub-Signature': `sha1=${sign('sha1')}`,
    'X-Hub-Signature-256': `sha256=${sha256}`,
    'X-GitHub-Delivery': task.uuid,
    'X-GitHub-Event': event,
    'X-GitHub-Event-Type': event,
    'X-GitHub-Hook-Installation-Target-Type': targetType,
  };
  let request: HookHttpRequest;
  if (hook.http_method === 'GET') {
    const url = new URL(hook.url);
    url.searchParams.set('payload', json);
    request = { url: url.href, method: 'GET', headers };
  } else if (hook.content_type === HookContentType.Form) {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    request = {
      url: hook.url,
      method: 'POST',
      headers,
      body: new URLSearchParams({ payload: json }).toString(),
    };
  } else {
    headers['Content-Type'] = 'application/json';
    request = { url: hook.url, method: 'POST', headers, body: json };
  }
  const recorded = Object.fromEntries(
    Object.entries(headers).filter(([name]) => !SECRET_HEADERS.has(name.toLowerCase())),
  );
  if (hook.header_authorization) headers.Authorization = hook.header_authorization;
  return { request, recorded };
}
