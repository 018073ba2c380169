/** The hook types the forge delivers to, and the per-type settings Gitea keeps in `meta`. */
import type { WebhookRow } from '../store/schema.js';

export const HOOK_TYPES = ['gitea', 'gogs', 'slack', 'discord', 'msteams'] as const;
export type HookType = (typeof HOOK_TYPES)[number];

export function isHookType(type: string): type is HookType {
  return (HOOK_TYPES as readonly string[]).includes(type);
}

/** Gitea's SlackMeta. */
export interface SlackMeta {
  channel: string;
  username: string;
  icon_url: string;
  color: string;
}

export function slackMetaOf(row: Pick<WebhookRow, 'meta'>): SlackMeta {
  let parsed: Partial<SlackMeta> = {};
  try {
    parsed = row.meta ? (JSON.parse(row.meta) as Partial<SlackMeta>) : {};
  } catch {
    parsed = {};
  }
  return {
    channel: parsed.channel ?? '',
    username: parsed.username ?? '',
    icon_url: parsed.icon_url ?? '',
    color: parsed.color ?? '',
  };
}

/** Gitea's IsValidSlackChannel: a name, optionally with its `#`, without blanks. */
export function isValidSlackChannel(channel: string): boolean {
  const name = channel.startsWith('#') ? channel.slice(1) : channel;
  return name.length > 0 && !/\s/.test(name);
}
