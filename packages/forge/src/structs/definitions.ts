/**
 * The wire structs under the names Gitea's API document gives them (`#/definitions/<Name>`). The API
 * document (api/api-document.ts) refers to these wherever a route or another struct uses the same schema
 * object, so a shape is written once, here in structs/, and named once, here.
 */
import type { TSchema } from 'typebox';
import { ActivitySchema } from './activity.js';
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
  CreateAccessTokenOption: CreateAccessTokenOptionSchema,
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
  EditAttachmentOptions: EditAttachmentOptionsSchema,
  EditOrgOption: EditOrgOptionSchema,
  EditReleaseOption: EditReleaseOptionSchema,
  EditRepoOption: EditRepoOptionSchema,
  EditUserOption: EditUserOptionSchema,
  OAuth2Application: OAuth2ApplicationSchema,
  Organization: OrganizationSchema,
  Permission: RepoPermissionsSchema,
  PublicKey: PublicKeySchema,
  Release: ReleaseSchema,
  Repository: RepositorySchema,
  SearchResults: SearchResultsSchema,
  Tag: TagSchema,
  TagProtection: TagProtectionSchema,
  Team: TeamSchema,
  User: UserSchema,
  UserHeatmapData: HeatmapSchema.items,
};
