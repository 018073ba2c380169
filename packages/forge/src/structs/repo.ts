import { type Static, type TSchema, type TUnsafe, Type } from 'typebox';
import { UserSchema } from './user.js';

/** `permissions` of a Repository as seen by the caller. */
export const RepoPermissionsSchema = Type.Object({
  admin: Type.Boolean(),
  push: Type.Boolean(),
  pull: Type.Boolean(),
});

/**
 * `T | null` as a shallow TypeScript type: the schema is the usual anyOf, but the inferred type stays one
 * level deep, so routes returning lists of repositories stay within the compiler's instantiation depth.
 */
function nullable<T extends TSchema>(schema: T): TUnsafe<Static<T> | null> {
  return Type.Unsafe<Static<T> | null>(Type.Union([schema, Type.Null()]));
}

/** `InternalTracker`. */
export const InternalTrackerSchema = Type.Object({
  enable_time_tracker: Type.Boolean(),
  allow_only_contributors_to_track_time: Type.Boolean(),
  enable_issue_dependencies: Type.Boolean(),
});

/** `ExternalTracker`. */
export const ExternalTrackerSchema = Type.Object({
  external_tracker_url: Type.String(),
  external_tracker_format: Type.String(),
  external_tracker_style: Type.String(),
  external_tracker_regexp_pattern: Type.String(),
});

/** `ExternalWiki`. */
export const ExternalWikiSchema = Type.Object({ external_wiki_url: Type.String() });

/** `RepoTransfer` (a pending transfer; the forge has none, so it is always null). */
export const RepoTransferSchema = Type.Object({
  doer: UserSchema,
  recipient: UserSchema,
  teams: Type.Array(Type.Object({}, { additionalProperties: true })),
});

/**
 * Gitea's `Repository` (modules/structs/repo.go), all 65 properties in Gitea's order. The objects Gitea
 * omits when a feature is off (a fork's parent, trackers, external wiki, a pending transfer) are sent as
 * null, so every property is present for strict clients.
 */
const RepositoryObject = Type.Object({
  id: Type.Integer(),
  owner: UserSchema,
  name: Type.String(),
  full_name: Type.String(),
  description: Type.String(),
  empty: Type.Boolean(),
  private: Type.Boolean(),
  fork: Type.Boolean(),
  template: Type.Boolean(),
  parent: nullable(Type.Object({}, { additionalProperties: true })),
  mirror: Type.Boolean(),
  size: Type.Integer(),
  language: Type.String(),
  languages_url: Type.String(),
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
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  archived_at: Type.String({ format: 'date-time' }),
  permissions: RepoPermissionsSchema,
  has_code: Type.Boolean(),
  has_issues: Type.Boolean(),
  internal_tracker: nullable(InternalTrackerSchema),
  external_tracker: nullable(ExternalTrackerSchema),
  has_wiki: Type.Boolean(),
  external_wiki: nullable(ExternalWikiSchema),
  has_pull_requests: Type.Boolean(),
  has_projects: Type.Boolean(),
  projects_mode: Type.String(),
  has_releases: Type.Boolean(),
  has_packages: Type.Boolean(),
  has_actions: Type.Boolean(),
  ignore_whitespace_conflicts: Type.Boolean(),
  allow_merge_commits: Type.Boolean(),
  allow_rebase: Type.Boolean(),
  allow_rebase_explicit: Type.Boolean(),
  allow_squash_merge: Type.Boolean(),
  allow_fast_forward_only_merge: Type.Boolean(),
  allow_rebase_update: Type.Boolean(),
  allow_manual_merge: Type.Boolean(),
  autodetect_manual_merge: Type.Boolean(),
  default_delete_branch_after_merge: Type.Boolean(),
  default_merge_style: Type.String(),
  default_allow_maintainer_edit: Type.Boolean(),
  avatar_url: Type.String(),
  internal: Type.Boolean(),
  mirror_interval: Type.String(),
  object_format_name: Type.Union([Type.Literal('sha1'), Type.Literal('sha256')]),
  mirror_updated: Type.String({ format: 'date-time' }),
  repo_transfer: nullable(RepoTransferSchema),
  topics: Type.Array(Type.String()),
  licenses: Type.Array(Type.String()),
});
export type Repository = Static<typeof RepositoryObject>;
// Routes see one precomputed type: 65 properties inferred inside every route's generics overflow tsc.
export const RepositorySchema: TUnsafe<Repository> = Type.Unsafe<Repository>(RepositoryObject);

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
