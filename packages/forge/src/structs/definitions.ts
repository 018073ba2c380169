/**
 * The wire structs under the names Gitea's API document gives them (`#/definitions/<Name>`). The API
 * document (api/api-document.ts) refers to these wherever a route or another struct uses the same schema
 * object, so a shape is written once, here in structs/, and named once, here.
 */
import type { TSchema } from 'typebox';
import { ActivitySchema } from './activity.js';
import {
  CommitAffectedFilesSchema,
  CommitMetaSchema,
  CommitSchema,
  CommitStatsSchema,
  CommitUserSchema,
  GitObjectSchema,
  ReferenceSchema,
  RepoCommitSchema,
} from './commit.js';
import {
  ChangeFileOperationSchema,
  ChangeFilesOptionsSchema,
  CommitDateOptionsSchema,
  ContentsResponseSchema,
  CreateFileOptionsSchema,
  DeleteFileOptionsSchema,
  FileCommitResponseSchema,
  FileDeleteResponseSchema,
  FileLinksSchema,
  FileResponseSchema,
  FilesResponseSchema,
  IdentitySchema,
  UpdateFileOptionsSchema,
} from './contents.js';
import {
  CreateHookOptionSchema,
  EditHookOptionSchema,
  HookDeliveryDetailSchema,
  HookDeliverySchema,
  HookSchema,
} from './hook.js';
import { CreateKeyOptionSchema, PublicKeySchema } from './key.js';
import { CreateOAuth2ApplicationOptionsSchema, OAuth2ApplicationSchema } from './oauth2.js';
import {
  CreateOrgOptionSchema,
  CreateTeamOptionSchema,
  EditOrgOptionSchema,
  OrganizationSchema,
  TeamSchema,
} from './org.js';
import {
  AttachmentSchema,
  CreateReleaseOptionSchema,
  CreateTagOptionSchema,
  CreateTagProtectionOptionSchema,
  EditAttachmentOptionsSchema,
  EditReleaseOptionSchema,
  ReleaseSchema,
  TagProtectionSchema,
  TagSchema,
} from './release.js';
import {
  AddCollaboratorOptionSchema,
  BranchSchema,
  CreateRepoOptionSchema,
  EditRepoOptionSchema,
  ExternalTrackerSchema,
  ExternalWikiSchema,
  InternalTrackerSchema,
  RepoPermissionsSchema,
  RepositorySchema,
  SearchResultsSchema,
} from './repo.js';
import { AccessTokenSchema, CreateAccessTokenOptionSchema } from './token.js';
import { CreateUserOptionSchema, EditUserOptionSchema, HeatmapSchema, UserSchema } from './user.js';

export const DEFINITIONS: Record<string, TSchema> = {
  AccessToken: AccessTokenSchema,
  Activity: ActivitySchema,
  AddCollaboratorOption: AddCollaboratorOptionSchema,
  Attachment: AttachmentSchema,
  Branch: BranchSchema,
  ChangeFileOperation: ChangeFileOperationSchema,
  ChangeFilesOptions: ChangeFilesOptionsSchema,
  Commit: CommitSchema,
  CommitAffectedFiles: CommitAffectedFilesSchema,
  CommitDateOptions: CommitDateOptionsSchema,
  CommitMeta: CommitMetaSchema,
  CommitStats: CommitStatsSchema,
  CommitUser: CommitUserSchema,
  ContentsResponse: ContentsResponseSchema,
  CreateAccessTokenOption: CreateAccessTokenOptionSchema,
  CreateFileOptions: CreateFileOptionsSchema,
  CreateHookOption: CreateHookOptionSchema,
  CreateKeyOption: CreateKeyOptionSchema,
  CreateOAuth2ApplicationOptions: CreateOAuth2ApplicationOptionsSchema,
  CreateOrgOption: CreateOrgOptionSchema,
  CreateReleaseOption: CreateReleaseOptionSchema,
  CreateRepoOption: CreateRepoOptionSchema,
  CreateTagOption: CreateTagOptionSchema,
  // Gitea's EditTagProtectionOption has the same fields; the forge validates both with one schema.
  CreateTagProtectionOption: CreateTagProtectionOptionSchema,
  CreateTeamOption: CreateTeamOptionSchema,
  CreateUserOption: CreateUserOptionSchema,
  DeleteFileOptions: DeleteFileOptionsSchema,
  EditAttachmentOptions: EditAttachmentOptionsSchema,
  EditHookOption: EditHookOptionSchema,
  EditOrgOption: EditOrgOptionSchema,
  EditReleaseOption: EditReleaseOptionSchema,
  EditRepoOption: EditRepoOptionSchema,
  EditUserOption: EditUserOptionSchema,
  ExternalTracker: ExternalTrackerSchema,
  ExternalWiki: ExternalWikiSchema,
  FileCommitResponse: FileCommitResponseSchema,
  FileDeleteResponse: FileDeleteResponseSchema,
  FileLinksResponse: FileLinksSchema,
  FileResponse: FileResponseSchema,
  FilesResponse: FilesResponseSchema,
  GitObject: GitObjectSchema,
  Identity: IdentitySchema,
  InternalTracker: InternalTrackerSchema,
  Hook: HookSchema,
  HookDelivery: HookDeliverySchema,
  HookDeliveryDetail: HookDeliveryDetailSchema,
  OAuth2Application: OAuth2ApplicationSchema,
  Organization: OrganizationSchema,
  Permission: RepoPermissionsSchema,
  PublicKey: PublicKeySchema,
  Reference: ReferenceSchema,
  Release: ReleaseSchema,
  RepoCommit: RepoCommitSchema,
  Repository: RepositorySchema,
  SearchResults: SearchResultsSchema,
  Tag: TagSchema,
  TagProtection: TagProtectionSchema,
  Team: TeamSchema,
  UpdateFileOptions: UpdateFileOptionsSchema,
  User: UserSchema,
  UserHeatmapData: HeatmapSchema.items,
};
