import { type Static, Type } from 'typebox';
import { UserSchema } from './user.js';

/** `permissions` of a Repository as seen by the caller. */
export const RepoPermissionsSchema = Type.Object({
  admin: Type.Boolean(),
  push: Type.Boolean(),
  pull: Type.Boolean(),
});

/** Gitea's `Repository` (modules/structs/repo.go): the fields the forge backs with real data. */
export const RepositorySchema = Type.Object({
  id: Type.Integer(),
  owner: UserSchema,
  name: Type.String(),
  full_name: Type.String(),
  description: Type.String(),
  empty: Type.Boolean(),
  private: Type.Boolean(),
  fork: Type.Boolean(),
  template: Type.Boolean(),
  mirror: Type.Boolean(),
  size: Type.Integer(),
  language: Type.String(),
  html_url: Type.String(),
  url: Type.String(),
  link: Type.String(),
  ssh_url: Type.String(),
  clone_url: Type.String(),
  original_url: Type.String(),
  website: Type.String(),
  stars_count: Type.Integer(),
  forks_count: Type.Integer(),
  watchers_count: Type.Integer(),
  open_issues_count: Type.Integer(),
  open_pr_counter: Type.Integer(),
  release_counter: Type.Integer(),
  default_branch: Type.String(),
  archived: Type.Boolean(),
  created_at: Type.String(),
  updated_at: Type.String(),
  archived_at: Type.String(),
  permissions: RepoPermissionsSchema,
  has_issues: Type.Boolean(),
  has_wiki: Type.Boolean(),
  has_pull_requests: Type.Boolean(),
  has_projects: Type.Boolean(),
  has_releases: Type.Boolean(),
  has_packages: Type.Boolean(),
  has_actions: Type.Boolean(),
  avatar_url: Type.String(),
  internal: Type.Boolean(),
  object_format_name: Type.String(),
});
export type Repository = Static<typeof RepositorySchema>;

/** `CreateRepoOption` (fields beyond these are accepted and ignored, as template options are). */
export const CreateRepoOptionSchema = Type.Object({
  name: Type.String({ minLength: 1 }),
  description: Type.Optional(Type.String({ maxLength: 2048 })),
  private: Type.Optional(Type.Boolean()),
  auto_init: Type.Optional(Type.Boolean()),
  default_branch: Type.Optional(Type.String({ maxLength: 100 })),
  readme: Type.Optional(Type.String()),
  gitignores: Type.Optional(Type.String()),
  license: Type.Optional(Type.String()),
  issue_labels: Type.Optional(Type.String()),
  template: Type.Optional(Type.Boolean()),
  trust_model: Type.Optional(Type.String()),
  object_format_name: Type.Optional(Type.Union([Type.Literal(''), Type.Literal('sha1')])),
});

/** `EditRepoOption` (the fields the forge implements). */
export const EditRepoOptionSchema = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1 })),
  description: Type.Optional(Type.String({ maxLength: 2048 })),
  website: Type.Optional(Type.String({ maxLength: 1024 })),
  private: Type.Optional(Type.Boolean()),
  default_branch: Type.Optional(Type.String()),
  archived: Type.Optional(Type.Boolean()),
});

/** `AddCollaboratorOption`. */
export const AddCollaboratorOptionSchema = Type.Object({
  permission: Type.Optional(Type.Union([Type.Literal('read'), Type.Literal('write'), Type.Literal('admin')])),
});

const PayloadUserSchema = Type.Object({ name: Type.String(), email: Type.String(), username: Type.String() });

/** `Branch` with its `PayloadCommit`. */
export const BranchSchema = Type.Object({
  name: Type.String(),
  commit: Type.Object({
    id: Type.String(),
    message: Type.String(),
    url: Type.String(),
    author: PayloadUserSchema,
    committer: PayloadUserSchema,
    verification: Type.Object({
      verified: Type.Boolean(),
      reason: Type.String(),
      signature: Type.String(),
      signer: Type.Null(),
      payload: Type.String(),
    }),
    timestamp: Type.String(),
    added: Type.Null(),
    removed: Type.Null(),
    modified: Type.Null(),
  }),
  protected: Type.Boolean(),
  required_approvals: Type.Integer(),
  enable_status_check: Type.Boolean(),
  status_check_contexts: Type.Array(Type.String()),
  user_can_push: Type.Boolean(),
  user_can_merge: Type.Boolean(),
  effective_branch_protection_name: Type.String(),
});
export type Branch = Static<typeof BranchSchema>;

/** `SearchResults` of `GET /repos/search`: `{ok, data}`. */
export const SearchResultsSchema = Type.Object({ ok: Type.Boolean(), data: Type.Array(RepositorySchema) });

/** `SearchError`: the search's own failure body. */
export const SearchErrorSchema = Type.Object({ ok: Type.Boolean(), error: Type.String() });
