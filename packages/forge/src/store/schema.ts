import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

/**
 * Table shapes of the forge database, named as in Gitea where sensible.
 * Portability rules (SQLite and PostgreSQL run the same queries):
 * - ids are int64 (`integer` primary key on SQLite, `bigserial` on PostgreSQL), read back as numbers;
 * - timestamps are unix seconds in `bigint` columns named `*_unix`;
 * - booleans are `integer` 0/1 columns (better-sqlite3 cannot bind JS booleans), typed `Flag`.
 */
export type Flag = 0 | 1;
type Id = Generated<number>;
/** A flag column with a database default: optional on insert. */
type DefaultFlag = ColumnType<Flag, Flag | undefined, Flag>;
type DefaultNumber = ColumnType<number, number | undefined, number>;
type DefaultText = ColumnType<string, string | undefined, string>;

/** `user.type` values (Gitea `UserType`). */
export const UserType = { Individual: 0, Organization: 1, Bot: 4 } as const;
/** `user.visibility` values (Gitea `VisibleType`). */
export const Visibility = { Public: 0, Limited: 1, Private: 2 } as const;
/** Access modes shared by teams, collaborators and keys (Gitea `perm.AccessMode`). */
export const AccessMode = { None: 0, Read: 1, Write: 2, Admin: 3, Owner: 4 } as const;
/** `public_key.type` values (Gitea `KeyType`). */
export const KeyType = { User: 1, Deploy: 2, Principal: 3 } as const;

export interface UserTable {
  id: Id;
  type: DefaultNumber;
  lower_name: string;
  name: string;
  full_name: DefaultText;
  email: DefaultText;
  keep_email_private: DefaultFlag;
  /** scrypt hash (hex) of the password; empty for organizations. */
  passwd: DefaultText;
  passwd_hash_algo: DefaultText;
  salt: DefaultText;
  login_source: DefaultNumber;
  login_name: DefaultText;
  location: DefaultText;
  website: DefaultText;
  description: DefaultText;
  language: DefaultText;
  avatar: DefaultText;
  is_admin: DefaultFlag;
  is_active: DefaultFlag;
  prohibit_login: DefaultFlag;
  must_change_password: DefaultFlag;
  is_restricted: DefaultFlag;
  visibility: DefaultNumber;
  keep_activity_private: DefaultFlag;
  repo_admin_change_team_access: DefaultFlag;
  num_followers: DefaultNumber;
  num_following: DefaultNumber;
  num_stars: DefaultNumber;
  created_unix: number;
  updated_unix: number;
  last_login_unix: DefaultNumber;
}

export interface OrgUserTable {
  id: Id;
  org_id: number;
  uid: number;
  is_public: DefaultFlag;
}

export interface TeamTable {
  id: Id;
  org_id: number;
  lower_name: string;
  name: string;
  description: DefaultText;
  /** AccessMode of the team as a whole. */
  authorize: number;
  includes_all_repositories: DefaultFlag;
  can_create_org_repo: DefaultFlag;
}

export interface TeamUnitTable {
  id: Id;
  org_id: number;
  team_id: number;
  /** Gitea unit type number (1 code, 2 issues, 3 pulls, 4 releases, 5 wiki, …). */
  type: number;
  access_mode: number;
}

export interface TeamUserTable {
  id: Id;
  org_id: number;
  team_id: number;
  uid: number;
}

export interface TeamRepoTable {
  id: Id;
  org_id: number;
  team_id: number;
  repo_id: number;
}

export interface RepositoryTable {
  id: Id;
  owner_id: number;
  owner_name: string;
  lower_name: string;
  name: string;
  description: DefaultText;
  website: DefaultText;
  is_private: DefaultFlag;
  is_empty: DefaultFlag;
  is_archived: DefaultFlag;
  default_branch: DefaultText;
  created_unix: number;
  updated_unix: number;
}

export interface CollaborationTable {
  id: Id;
  repo_id: number;
  user_id: number;
  mode: number;
  created_unix: number;
  updated_unix: number;
}

export interface AccessTokenTable {
  id: Id;
  uid: number;
  name: string;
  /** hex sha256(salt + token); the token itself is never stored. */
  token_hash: string;
  token_salt: string;
  token_last_eight: string;
  /** Normalised scope string (see auth/scopes.ts). */
  scope: string;
  /** 1: the token reaches only its access_token_repository rows (none left: no repository at all). */
  repo_scoped: DefaultFlag;
  created_unix: number;
  updated_unix: number;
}

/** A repository a repository-scoped token may reach (no rows: the token is not limited). */
export interface AccessTokenRepositoryTable {
  token_id: number;
  repo_id: number;
}

export interface PublicKeyTable {
  id: Id;
  owner_id: number;
  name: string;
  /** `SHA256:<base64>` for SSH keys; empty for principals. */
  fingerprint: string;
  /** authorized_keys line for keys, the principal name for principals. */
  content: string;
  mode: number;
  type: number;
  created_unix: number;
  updated_unix: number;
}

export interface ActionTable {
  id: Id;
  /** Receiver: whose feed the row belongs to. */
  user_id: number;
  op_type: number;
  act_user_id: number;
  repo_id: DefaultNumber;
  comment_id: DefaultNumber;
  ref_name: DefaultText;
  is_private: DefaultFlag;
  is_deleted: DefaultFlag;
  content: DefaultText;
  created_unix: number;
}

/** Action rows per receiver, actor, repository and 15-minute bucket; kept by triggers (migration 009). */
export interface ActionHeatmapTable {
  user_id: number;
  act_user_id: number;
  bucket: number;
  repo_id: number;
  contributions: number;
}

/** Non-deleted action rows per receiver, actor, repository and privacy; kept by triggers (migration 009). */
export interface ActionFeedCountTable {
  user_id: number;
  act_user_id: number;
  repo_id: number;
  is_private: 0 | 1;
  total: number;
}

/**
 * When activity answers may have changed (migration 012): `scope` is a receiving user's id (their action
 * rows) or 0 (who may see whose activity); triggers add one to `generation` on every such write.
 */
export interface ActivityGenerationTable {
  scope: number;
  generation: number;
}

export interface ReleaseTable {
  id: Id;
  repo_id: number;
  publisher_id: number;
  tag_name: string;
  lower_tag_name: string;
  target: DefaultText;
  title: DefaultText;
  sha1: DefaultText;
  num_commits: DefaultNumber;
  note: DefaultText;
  is_draft: DefaultFlag;
  is_prerelease: DefaultFlag;
  is_tag: DefaultFlag;
  created_unix: number;
}

/** Release records (tag-only ones excluded) per repository and flags, kept by triggers (migration 010). */
export interface ReleaseCountTable {
  repo_id: number;
  is_draft: number;
  is_prerelease: number;
  total: number;
}

export interface ProtectedTagTable {
  id: Id;
  repo_id: number;
  name_pattern: string;
  /** JSON array of user ids. */
  allowlist_user_ids: DefaultText;
  /** JSON array of team ids. */
  allowlist_team_ids: DefaultText;
  created_unix: number;
  updated_unix: number;
}

export interface OAuth2ApplicationTable {
  id: Id;
  uid: number;
  name: string;
  /** A UUID, public. */
  client_id: string;
  /** hex sha256(salt + secret); the secret is shown once and never stored. */
  client_secret_hash: string;
  client_secret_salt: string;
  /** JSON array of the registered redirect URIs. */
  redirect_uris: string;
  confidential_client: Flag;
  skip_secondary_authorization: Flag;
  created_unix: number;
  updated_unix: number;
}

export interface OAuth2GrantTable {
  id: Id;
  user_id: number;
  application_id: number;
  /** Bumped for every token pair issued; a refresh token carries the value it was issued with. */
  counter: Generated<number>;
  /** Space-separated scopes the user consented to. */
  scope: string;
  nonce: string;
  created_unix: number;
  updated_unix: number;
}

export interface OAuth2AuthorizationCodeTable {
  id: Id;
  grant_id: number;
  /** hex sha256 of the code; the code itself is never stored. */
  code_hash: string;
  code_challenge: string;
  code_challenge_method: string;
  redirect_uri: string;
  valid_until: number;
}

export interface OAuth2SigningKeyTable {
  /** Always 1: one key per installation. */
  id: number;
  alg: string;
  kid: string;
  /** The private key as a JWK (JSON). */
  private_jwk: string;
  created_unix: number;
}

export interface WebSessionTable {
  /** hex sha256 of the session cookie value. */
  id_hash: string;
  uid: number;
  created_unix: number;
  expires_unix: number;
}

/** A release attachment; its file lives under `<data-dir>/attachments/` by uuid. */
export interface AttachmentTable {
  id: Id;
  uuid: string;
  repo_id: number;
  release_id: number;
  uploader_id: number;
  name: string;
  download_count: DefaultNumber;
  size: number;
  created_unix: number;
}

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

export interface Database {
  user: UserTable;
  org_user: OrgUserTable;
  team: TeamTable;
  team_unit: TeamUnitTable;
  team_user: TeamUserTable;
  team_repo: TeamRepoTable;
  repository: RepositoryTable;
  collaboration: CollaborationTable;
  access_token: AccessTokenTable;
  access_token_repository: AccessTokenRepositoryTable;
  public_key: PublicKeyTable;
  action: ActionTable;
  action_heatmap: ActionHeatmapTable;
  action_feed_count: ActionFeedCountTable;
  activity_generation: ActivityGenerationTable;
  release: ReleaseTable;
  release_count: ReleaseCountTable;
  protected_tag: ProtectedTagTable;
  oauth2_application: OAuth2ApplicationTable;
  oauth2_grant: OAuth2GrantTable;
  oauth2_authorization_code: OAuth2AuthorizationCodeTable;
  oauth2_signing_key: OAuth2SigningKeyTable;
  web_session: WebSessionTable;
  attachment: AttachmentTable;
  webhook: WebhookTable;
  hook_task: HookTaskTable;
  ref_journal: RefJournalTable;
}

export type UserRow = Selectable<UserTable>;
export type NewUser = Insertable<UserTable>;
export type UserUpdate = Updateable<UserTable>;
export type TeamRow = Selectable<TeamTable>;
export type AccessTokenRow = Selectable<AccessTokenTable>;
export type PublicKeyRow = Selectable<PublicKeyTable>;
export type ActionRow = Selectable<ActionTable>;
export type RepositoryRow = Selectable<RepositoryTable>;
export type RefJournalRow = Selectable<RefJournalTable>;
export type ReleaseRow = Selectable<ReleaseTable>;
export type ProtectedTagRow = Selectable<ProtectedTagTable>;
export type OAuth2ApplicationRow = Selectable<OAuth2ApplicationTable>;
export type OAuth2GrantRow = Selectable<OAuth2GrantTable>;
export type OAuth2AuthorizationCodeRow = Selectable<OAuth2AuthorizationCodeTable>;
export type AttachmentRow = Selectable<AttachmentTable>;
export type WebhookRow = Selectable<WebhookTable>;
export type HookTaskRow = Selectable<HookTaskTable>;
