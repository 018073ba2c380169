import { type Static, Type } from 'typebox';
import { PageQuery, QueryInt64, QueryString } from './query.js';

/** Gitea's `User` (modules/structs/user.go), in its emitted field order, plus the duplicate `username`. */
export const UserSchema = Type.Object({
  id: Type.Integer(),
  login: Type.String(),
  login_name: Type.String(),
  source_id: Type.Integer(),
  full_name: Type.String(),
  email: Type.String(),
  avatar_url: Type.String(),
  html_url: Type.String(),
  language: Type.String(),
  is_admin: Type.Boolean(),
  last_login: Type.String(),
  created: Type.String(),
  restricted: Type.Boolean(),
  active: Type.Boolean(),
  prohibit_login: Type.Boolean(),
  location: Type.String(),
  website: Type.String(),
  description: Type.String(),
  visibility: Type.String(),
  followers_count: Type.Integer(),
  following_count: Type.Integer(),
  starred_repos_count: Type.Integer(),
  username: Type.String(),
});
export type User = Static<typeof UserSchema>;

/** `{ok, data}` of `GET /users/search`. */
export const UserSearchResultSchema = Type.Object({ ok: Type.Boolean(), data: Type.Array(UserSchema) });

/** The search's own failure body. */
export const UserSearchFailureSchema = Type.Object({ ok: Type.Boolean(), error: Type.String() });

/** `[{timestamp, contributions}]` of the heatmap. */
export const HeatmapSchema = Type.Array(
  Type.Object({ timestamp: Type.Integer(), contributions: Type.Integer() }),
);
export type Heatmap = Static<typeof HeatmapSchema>;

const VisibilityOption = Type.Union([
  Type.Literal(''),
  Type.Literal('public'),
  Type.Literal('limited'),
  Type.Literal('private'),
]);

/** `CreateUserOption` of `POST /admin/users`. */
export const CreateUserOptionSchema = Type.Object({
  source_id: Type.Optional(Type.Integer()),
  login_name: Type.Optional(Type.String()),
  username: Type.String({ minLength: 1, maxLength: 40 }),
  full_name: Type.Optional(Type.String({ maxLength: 100 })),
  email: Type.String({ minLength: 1, maxLength: 254 }),
  password: Type.Optional(Type.String({ maxLength: 255 })),
  must_change_password: Type.Optional(Type.Boolean()),
  send_notify: Type.Optional(Type.Boolean()),
  restricted: Type.Optional(Type.Boolean()),
  visibility: Type.Optional(VisibilityOption),
  created_at: Type.Optional(Type.String()),
});

/** `EditUserOption` of `PATCH /admin/users/{username}` (plus `keep_email_private`). */
export const EditUserOptionSchema = Type.Object({
  source_id: Type.Optional(Type.Integer()),
  login_name: Type.Optional(Type.String()),
  email: Type.Optional(Type.String({ maxLength: 254 })),
  full_name: Type.Optional(Type.String({ maxLength: 100 })),
  password: Type.Optional(Type.String({ maxLength: 255 })),
  must_change_password: Type.Optional(Type.Boolean()),
  website: Type.Optional(Type.String({ maxLength: 255 })),
  location: Type.Optional(Type.String({ maxLength: 50 })),
  description: Type.Optional(Type.String({ maxLength: 255 })),
  active: Type.Optional(Type.Boolean()),
  admin: Type.Optional(Type.Boolean()),
  allow_git_hook: Type.Optional(Type.Boolean()),
  allow_import_local: Type.Optional(Type.Boolean()),
  max_repo_creation: Type.Optional(Type.Integer()),
  prohibit_login: Type.Optional(Type.Boolean()),
  allow_create_organization: Type.Optional(Type.Boolean()),
  restricted: Type.Optional(Type.Boolean()),
  visibility: Type.Optional(VisibilityOption),
  keep_email_private: Type.Optional(Type.Boolean()),
});

/** Query of `GET /users/search`. */
export const UserSearchQuerySchema = Type.Object({
  q: QueryString('keyword'),
  uid: QueryInt64('ID of the user to search for'),
  ...PageQuery,
});
