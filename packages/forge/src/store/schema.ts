/**
 * Table shapes of the forge database, named as in Gitea where sensible: the `Database` Kysely is typed
 * with, and the row types the rest of the code reads. The tables themselves are in ./tables/, one file per
 * area; ./tables/columns.ts has the portability rules every column follows.
 */

import type { Insertable, Selectable, Updateable } from 'kysely';
import type {
  AccessTokenRepositoryTable,
  AccessTokenTable,
  OrgUserTable,
  PublicKeyTable,
  TeamRepoTable,
  TeamTable,
  TeamUnitTable,
  TeamUserTable,
  UserTable,
  WebSessionTable,
} from './tables/accounts.js';
import type {
  ActionFeedCountTable,
  ActionHeatmapTable,
  ActionTable,
  ActivityGenerationTable,
} from './tables/activity.js';
import type {
  OAuth2ApplicationTable,
  OAuth2AuthorizationCodeTable,
  OAuth2GrantTable,
  OAuth2SigningKeyTable,
} from './tables/oauth.js';
import type {
  AttachmentTable,
  CollaborationTable,
  ProtectedTagTable,
  ReleaseCountTable,
  ReleaseTable,
  RepositoryTable,
} from './tables/repositories.js';
import type { HookTaskTable, RefJournalTable, WebhookTable } from './tables/webhooks.js';

export type {
  AccessTokenRepositoryTable,
  AccessTokenTable,
  OrgUserTable,
  PublicKeyTable,
  TeamRepoTable,
  TeamTable,
  TeamUnitTable,
  TeamUserTable,
  UserTable,
  WebSessionTable,
} from './tables/accounts.js';
export { AccessMode, KeyType, UserType, Visibility } from './tables/accounts.js';
export type {
  ActionFeedCountTable,
  ActionHeatmapTable,
  ActionTable,
  ActivityGenerationTable,
} from './tables/activity.js';
export type { Flag } from './tables/columns.js';
export type {
  OAuth2ApplicationTable,
  OAuth2AuthorizationCodeTable,
  OAuth2GrantTable,
  OAuth2SigningKeyTable,
} from './tables/oauth.js';
export type {
  AttachmentTable,
  CollaborationTable,
  ProtectedTagTable,
  ReleaseCountTable,
  ReleaseTable,
  RepositoryTable,
} from './tables/repositories.js';
export type { HookTaskState, HookTaskTable, RefJournalTable, WebhookTable } from './tables/webhooks.js';
export { HookContentType, HookStatus } from './tables/webhooks.js';

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
