/**
 * Webhook wire shapes: Gitea's `Hook`, `CreateHookOption`, `EditHookOption` (modules/structs/hook.go),
 * the event payloads it sends, and the forge's delivery history (an extension shaped like GitHub's
 * webhook deliveries API; Gitea has none).
 */
import { type Static, Type } from 'typebox';
import { OrganizationSchema } from './org.js';
import { PageQuery } from './query.js';
import { ReleaseSchema } from './release.js';
import { RepositorySchema } from './repo.js';
import { UserSchema } from './user.js';

/** Bounds on what a request may store: a URL or header value is short, a secret is not a document. */
const ConfigValue = Type.String({ maxLength: 2048 });
const HookConfig = Type.Record(Type.String({ maxLength: 64 }), ConfigValue);

/** Gitea's `Hook`, in its emitted field order; `secret` and `authorization_header` are never returned. */
export const HookSchema = Type.Object({
  id: Type.Integer(),
  type: Type.String(),
  branch_filter: Type.String(),
  config: Type.Record(Type.String(), Type.String()),
  events: Type.Array(Type.String()),
  authorization_header: Type.String({
    description: 'Always empty: the forge never returns the stored header (Gitea does)',
  }),
  active: Type.Boolean(),
  updated_at: Type.String({ format: 'date-time' }),
  created_at: Type.String({ format: 'date-time' }),
  consecutive_failures: Type.Integer({
    description: 'Forge extension: deliveries in a row that failed after all their attempts',
  }),
  disabled_reason: Type.String({
    description: 'Forge extension: why the forge deactivated this hook (empty when it did not)',
  }),
});
export type Hook = Static<typeof HookSchema>;

/** `CreateHookOption`: `config` needs `url` and `content_type` (json|form); Slack hooks a `channel`. */
export const CreateHookOptionSchema = Type.Object({
  type: Type.String({ maxLength: 32, description: 'gitea, gogs, slack, discord or msteams' }),
  config: HookConfig,
  events: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 64 })),
  branch_filter: Type.Optional(Type.String({ maxLength: 1024 })),
  active: Type.Optional(Type.Boolean({ default: false })),
  authorization_header: Type.Optional(Type.String({ maxLength: 2048 })),
});
export type CreateHookOption = Static<typeof CreateHookOptionSchema>;

/** `EditHookOption`: absent fields keep their value, except `events` (absent or empty means push). */
export const EditHookOptionSchema = Type.Object({
  config: Type.Optional(HookConfig),
  events: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 64 })),
  branch_filter: Type.Optional(Type.String({ maxLength: 1024 })),
  active: Type.Optional(Type.Boolean()),
  authorization_header: Type.Optional(Type.String({ maxLength: 2048 })),
});
export type EditHookOption = Static<typeof EditHookOptionSchema>;

/** `POST …/hooks/{id}/tests`: `ref` picks the commit the test push reports (default: default branch). */
export const HookTestQuerySchema = Type.Object({
  ref: Type.Optional(Type.String({ description: 'The name of the commit/branch/tag, default branch' })),
});

// ---- Event payloads (Gitea's structs; what a gitea or gogs hook receives as JSON) ----

const PayloadUser = Type.Object({ name: Type.String(), email: Type.String(), username: Type.String() });

/** `PayloadCommit` as push payloads carry it. */
export const PayloadCommitSchema = Type.Object({
  id: Type.String(),
  message: Type.String(),
  url: Type.String(),
  author: PayloadUser,
  committer: PayloadUser,
  verification: Type.Null(),
  timestamp: Type.String(),
  added: Type.Array(Type.String()),
  removed: Type.Array(Type.String()),
  modified: Type.Array(Type.String()),
});
export type PayloadCommit = Static<typeof PayloadCommitSchema>;

export const PushPayloadSchema = Type.Object({
  ref: Type.String(),
  before: Type.String(),
  after: Type.String(),
  compare_url: Type.String(),
  commits: Type.Array(PayloadCommitSchema),
  total_commits: Type.Integer(),
  head_commit: Type.Union([PayloadCommitSchema, Type.Null()]),
  repository: RepositorySchema,
  pusher: UserSchema,
  sender: UserSchema,
});
export type PushPayload = Static<typeof PushPayloadSchema>;

export const CreatePayloadSchema = Type.Object({
  sha: Type.String(),
  ref: Type.String(),
  ref_type: Type.String(),
  repository: RepositorySchema,
  sender: UserSchema,
});
export type CreatePayload = Static<typeof CreatePayloadSchema>;

export const DeletePayloadSchema = Type.Object({
  ref: Type.String(),
  ref_type: Type.String(),
  pusher_type: Type.String(),
  repository: RepositorySchema,
  sender: UserSchema,
});
export type DeletePayload = Static<typeof DeletePayloadSchema>;

export const ReleasePayloadSchema = Type.Object({
  action: Type.String(),
  release: ReleaseSchema,
  repository: RepositorySchema,
  sender: UserSchema,
});
export type ReleasePayload = Static<typeof ReleasePayloadSchema>;

export const RepositoryPayloadSchema = Type.Object({
  action: Type.String(),
  repository: RepositorySchema,
  organization: Type.Union([OrganizationSchema, Type.Null()]),
  sender: UserSchema,
});
export type RepositoryPayload = Static<typeof RepositoryPayloadSchema>;

// ---- Delivery history (forge extension, shaped like GitHub's "webhook deliveries") ----

export const HookDeliveryListQuerySchema = Type.Object({ ...PageQuery });

/** One delivery of one event to one hook, however many attempts it took. */
export const HookDeliverySchema = Type.Object({
  id: Type.Integer(),
  guid: Type.String({ description: 'The X-Gitea-Delivery id, the same on every attempt' }),
  delivered_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  redelivery: Type.Boolean(),
  duration: Type.Number({ description: 'Seconds the last attempt took' }),
  status: Type.String({ description: 'OK, or why the last attempt failed' }),
  status_code: Type.Integer({ description: 'HTTP status of the last answer (0: none)' }),
  event: Type.String(),
  action: Type.Union([Type.String(), Type.Null()]),
  state: Type.String({ description: 'pending, delivering, delivered, failed or dropped' }),
  attempts: Type.Integer(),
  next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  repository_id: Type.Union([Type.Integer(), Type.Null()]),
});
export type HookDelivery = Static<typeof HookDeliverySchema>;

const Headers = Type.Record(Type.String(), Type.String());

/** A delivery with its last request (secrets removed) and a bounded excerpt of the answer. */
export const HookDeliveryDetailSchema = Type.Object({
  ...HookDeliverySchema.properties,
  url: Type.String(),
  request: Type.Object({
    headers: Headers,
    payload: Type.Unknown({ description: 'The event payload as the hook type received it' }),
  }),
  response: Type.Object({
    headers: Headers,
    payload: Type.Union([Type.String(), Type.Null()], { description: 'First bytes of the answer' }),
  }),
});
export type HookDeliveryDetail = Static<typeof HookDeliveryDetailSchema>;
