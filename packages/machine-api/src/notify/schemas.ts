/**
 * Wire shapes of the notification endpoints and of the webhook body, registered as shared schemas (their
 * `$id` is the OpenAPI component name). `NewNotificationTarget` is also what a `[[notify]]` table of the
 * configuration file is checked against: one shape for both ways of defining a target.
 */

import { type Static, type TSchema, Type } from 'typebox';
import { NOTIFY_EVENTS } from './events.js';

/** Printable text without control characters (no NUL, no line breaks in a header or an address). */
const PLAIN = '^[^\\u0000-\\u001f\\u007f]*$';
const text = (maxLength: number, description: string) =>
  Type.String({ minLength: 1, maxLength, pattern: PLAIN, description });

export const TARGET_KINDS = ['webhook', 'ntfy', 'discord', 'telegram', 'email'] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];

export const NotifyEventName = Type.Unsafe<(typeof NOTIFY_EVENTS)[number]>({
  $id: 'NotifyEventName',
  type: 'string',
  enum: [...NOTIFY_EVENTS],
  description:
    'A notification event: `job.started|completed|failed|cancelled|paused`, `machine.failed|offline|online|awaiting_clear`, `queue.waiting|unroutable`, `test`.',
});

const TIME_OF_DAY = '^([01][0-9]|2[0-3]):[0-5][0-9]$';

const nullable = (schema: TSchema) => Type.Unsafe({ ...schema, nullable: true });

/** Every settable field of a target; optional here, `checkTarget` (targets.ts) says what each kind needs. */
const targetFields = {
  name: Type.String({
    minLength: 1,
    maxLength: 64,
    pattern: '^[A-Za-z0-9][A-Za-z0-9 ._-]*$',
    description: 'Unique name of the target (letters, digits, space, `.`, `_`, `-`).',
  }),
  kind: Type.Unsafe<TargetKind>({ type: 'string', enum: [...TARGET_KINDS], description: 'Where it goes.' }),
  enabled: Type.Boolean({ description: 'A disabled target receives nothing (default true).' }),
  events: Type.Array(
    Type.Unsafe<(typeof NOTIFY_EVENTS)[number]>({ type: 'string', enum: [...NOTIFY_EVENTS] }),
    {
      maxItems: NOTIFY_EVENTS.length,
      uniqueItems: true,
      description: 'Events sent to this target; absent: all of them.',
    },
  ),
  machines: Type.Array(text(64, 'a machine id or a tag of machines'), {
    maxItems: 256,
    uniqueItems: true,
    description:
      'Only events about these machines (ids, or tags given to machines in the configuration); absent: every machine. Events about no machine (queue, test) always pass.',
  }),
  quiet_hours: Type.Object(
    {
      start: Type.String({ pattern: TIME_OF_DAY, description: '`HH:MM`, local time.' }),
      end: Type.String({ pattern: TIME_OF_DAY, description: '`HH:MM`, local time; may be past midnight.' }),
      timezone: text(64, 'An IANA time zone such as `Europe/Berlin` (default UTC).'),
    },
    {
      additionalProperties: false,
      description:
        'Between `start` and `end` only `job.failed`, `machine.failed` and `machine.offline` are sent; the rest is dropped.',
    },
  ),
  burst: Type.Object(
    {
      max: Type.Integer({ minimum: 1, maximum: 1000, description: 'Messages sent at once per window.' }),
      minutes: Type.Number({ minimum: 0.01, maximum: 1440, description: 'Length of the window.' }),
    },
    {
      additionalProperties: false,
      description:
        'Burst limit (off when absent): beyond `max` messages within `minutes`, the rest is folded into one digest sent when the window ends.',
    },
  ),
  timeout_seconds: Type.Number({
    minimum: 0.1,
    maximum: 300,
    description: 'How long one attempt may take (default 10).',
  }),
  max_attempts: Type.Integer({
    minimum: 1,
    maximum: 100,
    description: 'Attempts before failing (default 10).',
  }),
  retry_seconds: Type.Number({
    minimum: 0.01,
    maximum: 3600,
    description: 'Wait before the first retry, doubled each time up to an hour (default 10).',
  }),
  url: text(
    2048,
    'webhook: the receiver; ntfy: the topic URL; discord: the webhook URL (secret); telegram: the Bot API base URL (default https://api.telegram.org).',
  ),
  secret: text(256, 'webhook: the Standard Webhooks signing secret, `whsec_` and base64 (secret).'),
  token: text(1024, 'ntfy: access token (secret).'),
  bot_token: text(256, 'telegram: the bot token (secret).'),
  chat_id: text(64, 'telegram: the chat to post to.'),
  host: text(253, 'email: the SMTP server.'),
  port: Type.Integer({
    minimum: 1,
    maximum: 65535,
    description: 'email: SMTP port (default 587, 465 for `tls = "implicit"`).',
  }),
  tls: Type.Unsafe<'starttls' | 'implicit' | 'none'>({
    type: 'string',
    enum: ['starttls', 'implicit', 'none'],
    description:
      'email: `starttls` (required; the default), `implicit` (TLS from the first byte, port 465) or `none`.',
  }),
  ca_file: text(4096, 'email: a PEM file of the certificate authority to trust for a private mail server.'),
  username: text(256, 'email: SMTP user name.'),
  password: text(1024, 'email: SMTP password (secret).'),
  from: text(320, 'email: sender address.'),
  to: Type.Array(text(320, 'recipient address'), {
    minItems: 1,
    maxItems: 50,
    description: 'email: recipients.',
  }),
};
type Fields = typeof targetFields;
const optionalFields = Object.fromEntries(
  Object.entries(targetFields).map(([key, schema]) => [key, Type.Optional(schema as TSchema)]),
) as { [K in keyof Fields]: ReturnType<typeof Type.Optional<Fields[K]>> };

export const NewNotificationTarget = Type.Object(
  { ...optionalFields, name: targetFields.name, kind: targetFields.kind },
  {
    $id: 'NewNotificationTarget',
    additionalProperties: false,
    description:
      'A notification target, as in a `[[notify]]` table of the configuration. Which keys apply depends on `kind` (see docs/machine-api/notifications.md).',
  },
);
export type NewNotificationTarget = Static<typeof NewNotificationTarget>;

/** Optional settings a PATCH may remove with `null`. */
export const REMOVABLE_FIELDS = [
  'events',
  'machines',
  'quiet_hours',
  'burst',
  'token',
  'username',
  'password',
  'ca_file',
] as const;

export const NotificationTargetPatch = Type.Object(
  {
    ...optionalFields,
    ...Object.fromEntries(
      REMOVABLE_FIELDS.map((key) => [key, Type.Optional(nullable(targetFields[key] as TSchema))]),
    ),
  },
  {
    $id: 'NotificationTargetPatch',
    additionalProperties: false,
    description:
      'Fields to change; `null` removes an optional one (`quiet_hours`, `burst`, `events`, `machines`, a secret).',
  },
);

export const NotificationTarget = Type.Object(
  {
    id: Type.String({ description: 'The target id.' }),
    name: targetFields.name,
    kind: targetFields.kind,
    source: Type.Unsafe<'config' | 'api'>({
      type: 'string',
      enum: ['config', 'api'],
      description: '`config`: defined in the configuration file (read-only here); `api`: made over HTTP.',
    }),
    enabled: targetFields.enabled,
    events: nullable(targetFields.events),
    machines: nullable(targetFields.machines),
    quiet_hours: nullable(targetFields.quiet_hours),
    burst: nullable(targetFields.burst),
    timeout_seconds: Type.Number(),
    max_attempts: Type.Integer(),
    retry_seconds: Type.Number(),
    url: Type.Optional(Type.String({ description: 'Not shown for discord, whose URL holds its token.' })),
    chat_id: Type.Optional(Type.String()),
    host: Type.Optional(Type.String()),
    port: Type.Optional(Type.Integer()),
    tls: Type.Optional(Type.String()),
    username: Type.Optional(Type.String()),
    from: Type.Optional(Type.String()),
    to: Type.Optional(Type.Array(Type.String())),
    secret_set: Type.Boolean({
      description:
        "Whether the kind's secret (signing secret, token, bot token, password, Discord URL) is set; it is never shown.",
    }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'NotificationTarget', description: 'A notification target, without its secret.' },
);
export type NotificationTargetView = Static<typeof NotificationTarget>;

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'folded'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const NotificationDelivery = Type.Object(
  {
    id: Type.String({
      description: 'The delivery id; a webhook receives it as `webhook-id`, on every attempt.',
    }),
    target_id: Type.String(),
    target_name: Type.String(),
    event: Type.String({ description: 'The event, or `digest`.' }),
    status: Type.Unsafe<DeliveryStatus>({
      type: 'string',
      enum: [...DELIVERY_STATUSES],
      description:
        '`pending` (waiting or retrying), `delivered`, `failed` (attempts used up), `folded` (into the digest `digest_id`).',
    }),
    attempts: Type.Integer({ minimum: 0 }),
    response_status: nullable(Type.Integer({ description: 'Last HTTP status, or SMTP reply code.' })),
    response: nullable(
      Type.String({ description: 'Last SMTP reply line, or the start of the HTTP answer.' }),
    ),
    error: nullable(Type.String({ description: 'Why the last attempt failed.' })),
    created_at: Type.String({ format: 'date-time' }),
    next_attempt_at: nullable(Type.String({ format: 'date-time' })),
    delivered_at: nullable(Type.String({ format: 'date-time' })),
    digest_id: nullable(Type.String({ description: 'The digest this event was folded into.' })),
  },
  { $id: 'NotificationDelivery', description: 'One notification to one target, and what became of it.' },
);
export type NotificationDeliveryView = Static<typeof NotificationDelivery>;

const JobFactsSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  file_name: Type.String(),
  status: Type.String(),
  machine_id: nullable(Type.String()),
  progress: nullable(Type.Number()),
  duration_seconds: nullable(Type.Integer()),
  message: nullable(Type.String()),
  material: nullable(
    Type.Object({ filament_used_g: nullable(Type.Number()), filament_used_mm: nullable(Type.Number()) }),
  ),
});

export const NotificationPayloadSchema = Type.Object(
  {
    type: Type.String({ description: 'A `NotifyEventName`, or `digest`.' }),
    timestamp: Type.String({ format: 'date-time', description: 'When the event happened.' }),
    data: Type.Object({
      title: Type.String(),
      message: Type.String(),
      machine: nullable(Type.Object({ id: Type.String() })),
      job: nullable(JobFactsSchema),
      events: Type.Optional(
        Type.Array(Type.Object({ type: Type.String(), timestamp: Type.String(), title: Type.String() }), {
          description: 'digest only: the folded events, oldest first.',
        }),
      ),
    }),
  },
  {
    $id: 'NotificationPayload',
    description:
      'The JSON body a `webhook` target receives, signed as Standard Webhooks specifies (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>`).',
  },
);

export const TargetIdParams = Type.Object({
  id: Type.String({ maxLength: 64, description: 'The target id.' }),
});
export const DeliveriesQuery = Type.Object({
  target: Type.Optional(Type.String({ maxLength: 64, description: 'Only this target (id).' })),
  status: Type.Optional(
    Type.Unsafe<DeliveryStatus>({
      type: 'string',
      enum: [...DELIVERY_STATUSES],
      description: 'Only this status.',
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 1000,
      description: 'At most this many, newest first (default 100).',
    }),
  ),
});

export const notifySchemas = [
  NotifyEventName,
  NewNotificationTarget,
  NotificationTargetPatch,
  NotificationTarget,
  NotificationDelivery,
  NotificationPayloadSchema,
];
