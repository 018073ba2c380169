/** What a notification target is made of on the form: its events, the fields of each kind, the request body. */

import type { Schemas } from '../api/client';

export type NewTarget = Schemas['NewNotificationTarget'];
export type Kind = NewTarget['kind'];
export type EventName = NonNullable<NewTarget['events']>[number];

export const EVENTS: EventName[] = [
  'job.started',
  'job.completed',
  'job.failed',
  'job.cancelled',
  'job.paused',
  'machine.failed',
  'machine.offline',
  'machine.online',
  'machine.awaiting_clear',
  'queue.waiting',
  'queue.unroutable',
];

export interface KindField {
  key: keyof NewTarget;
  label: string;
  secret?: boolean;
  optional?: boolean;
}

/** The fields each kind asks for, in the order a person fills them in; `secret` ones are write-only. */
export const FIELDS: Record<Kind, KindField[]> = {
  webhook: [
    { key: 'url', label: 'Receiver URL' },
    { key: 'secret', label: 'Signing secret (whsec_…)', secret: true },
  ],
  ntfy: [
    { key: 'url', label: 'Topic URL (https://ntfy.sh/…)' },
    { key: 'token', label: 'Access token', secret: true, optional: true },
  ],
  discord: [{ key: 'url', label: 'Discord webhook URL', secret: true }],
  telegram: [
    { key: 'bot_token', label: 'Bot token', secret: true },
    { key: 'chat_id', label: 'Chat id' },
  ],
  email: [
    { key: 'host', label: 'SMTP server' },
    { key: 'port', label: 'Port', optional: true },
    { key: 'username', label: 'User name', optional: true },
    { key: 'password', label: 'Password', secret: true, optional: true },
    { key: 'from', label: 'From' },
    { key: 'to', label: 'To (comma-separated)' },
  ],
};

/** The body of `POST /notifications/targets` from the form's text; all events means no `events` list. */
export function newTarget(
  name: string,
  kind: Kind,
  values: Record<string, string>,
  events: EventName[],
): NewTarget {
  const target: Record<string, unknown> = { name, kind };
  for (const { key } of FIELDS[kind]) {
    const value = values[key]?.trim();
    if (!value) continue;
    if (key === 'port') target.port = Number(value);
    else if (key === 'to') target.to = value.split(',').map((address) => address.trim());
    else target[key] = value;
  }
  if (events.length < EVENTS.length) target.events = [...events, 'test'];
  return target as NewTarget;
}
