import { type Static, Type } from 'typebox';
import { PageQuery, QueryBool } from './query.js';
import { UserSchema } from './user.js';

/** Gitea's `Attachment` (modules/structs/attachment.go) in its emitted field order. */
export const AttachmentSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  size: Type.Integer(),
  download_count: Type.Integer(),
  created_at: Type.String({ format: 'date-time' }),
  uuid: Type.String(),
  browser_download_url: Type.String(),
});
export type Attachment = Static<typeof AttachmentSchema>;

/** `EditAttachmentOptions`: a non-empty name renames the attachment. */
export const EditAttachmentOptionsSchema = Type.Object({
  name: Type.Optional(Type.String()),
});

/** Gitea's `Release` (modules/structs/release.go) in its emitted field order. */
export const ReleaseSchema = Type.Object({
  id: Type.Integer(),
  tag_name: Type.String(),
  target_commitish: Type.String(),
  name: Type.String(),
  body: Type.String(),
  url: Type.String(),
  html_url: Type.String(),
  tarball_url: Type.String(),
  zipball_url: Type.String(),
  upload_url: Type.String(),
  draft: Type.Boolean(),
  prerelease: Type.Boolean(),
  created_at: Type.String(),
  published_at: Type.String(),
  author: UserSchema,
  assets: Type.Array(AttachmentSchema),
});
export type Release = Static<typeof ReleaseSchema>;

/** `CreateReleaseOption`: tag_name is required (binding `Required`, so not empty either). */
export const CreateReleaseOptionSchema = Type.Object({
  // Gitea stores tag names and targets in VARCHAR(255) columns; longer ones are refused before git sees them.
  tag_name: Type.String({ minLength: 1, maxLength: 255 }),
  tag_message: Type.Optional(Type.String({ maxLength: 65535 })),
  target_commitish: Type.Optional(Type.String({ maxLength: 255 })),
  name: Type.Optional(Type.String()),
  body: Type.Optional(Type.String()),
  draft: Type.Optional(Type.Boolean()),
  prerelease: Type.Optional(Type.Boolean()),
});

/** `EditReleaseOption`: strings apply when non-empty, booleans when present. */
export const EditReleaseOptionSchema = Type.Object({
  tag_name: Type.Optional(Type.String({ maxLength: 255 })),
  target_commitish: Type.Optional(Type.String({ maxLength: 255 })),
  name: Type.Optional(Type.String()),
  body: Type.Optional(Type.String()),
  draft: Type.Optional(Type.Boolean()),
  prerelease: Type.Optional(Type.Boolean()),
});

/** `Tag` (modules/structs/repo_tag.go). */
export const TagSchema = Type.Object({
  name: Type.String(),
  message: Type.String(),
  id: Type.String(),
  commit: Type.Object({ url: Type.String(), sha: Type.String(), created: Type.String() }),
  zipball_url: Type.String(),
  tarball_url: Type.String(),
});
export type Tag = Static<typeof TagSchema>;

/** `CreateTagOption`. */
export const CreateTagOptionSchema = Type.Object({
  tag_name: Type.String({ minLength: 1, maxLength: 255 }),
  message: Type.Optional(Type.String({ maxLength: 65535 })),
  target: Type.Optional(Type.String({ maxLength: 255 })),
});

/** `TagProtection`. */
export const TagProtectionSchema = Type.Object({
  id: Type.Integer(),
  name_pattern: Type.String(),
  whitelist_usernames: Type.Array(Type.String()),
  whitelist_teams: Type.Array(Type.String()),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type TagProtection = Static<typeof TagProtectionSchema>;

// Null is listed first: Fastify's validator coerces scalars into arrays, so an array-first union would
// turn `null` into `[""]`.
const OptionalNames = Type.Optional(Type.Union([Type.Null(), Type.Array(Type.String())]));

/** `CreateTagProtectionOption`. */
export const CreateTagProtectionOptionSchema = Type.Object({
  name_pattern: Type.Optional(Type.String({ maxLength: 255 })),
  whitelist_usernames: OptionalNames,
  whitelist_teams: OptionalNames,
});

/** `EditTagProtectionOption`: null lists leave the allowlist as it is. */
export const EditTagProtectionOptionSchema = CreateTagProtectionOptionSchema;

/** Query of `GET /repos/{owner}/{repo}/releases`. */
export const ReleaseListQuerySchema = Type.Object({
  draft: QueryBool('filter (exclude / include) drafts, if you dont have repo write access none will show'),
  'pre-release': QueryBool('filter (exclude / include) pre-releases'),
  ...PageQuery,
});
