import { type Static, Type } from 'typebox';
import { CommitMetaSchema, CommitUserSchema, CommitVerificationSchema } from './commit.js';
import { QueryString } from './query.js';

const NullableString = Type.Union([Type.String(), Type.Null()]);

/** `FileLinksResponse`. */
export const FileLinksSchema = Type.Object({
  self: NullableString,
  git: NullableString,
  html: NullableString,
});

/** Gitea's `ContentsResponse` in its emitted order; the `last_*` fields come with commit metadata. */
export const ContentsResponseSchema = Type.Object({
  name: Type.String(),
  path: Type.String(),
  sha: Type.String(),
  last_commit_sha: Type.Optional(Type.String()),
  last_committer_date: Type.Optional(Type.String({ format: 'date-time' })),
  last_author_date: Type.Optional(Type.String({ format: 'date-time' })),
  type: Type.String(),
  size: Type.Integer(),
  encoding: NullableString,
  content: NullableString,
  target: NullableString,
  url: NullableString,
  html_url: NullableString,
  git_url: NullableString,
  download_url: NullableString,
  submodule_git_url: NullableString,
  _links: FileLinksSchema,
});
export type ContentsResponse = Static<typeof ContentsResponseSchema>;

/** `?ref=` of the contents and raw routes. */
export const RefQuerySchema = Type.Object({
  ref: QueryString('The name of the commit/branch/tag. Default to the repository’s default branch.'),
});

/** `Identity`: who authors or commits a change. */
export const IdentitySchema = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 255 })),
  email: Type.Optional(Type.String({ maxLength: 255 })),
});

/** `CommitDateOptions`. */
export const CommitDateOptionsSchema = Type.Object({
  author: Type.Optional(Type.String({ format: 'date-time' })),
  committer: Type.Optional(Type.String({ format: 'date-time' })),
});

/** `FileOptions` shared by every write (Gitea binds branch names as GitRefName, MaxSize(100)). */
const FileOptions = {
  message: Type.Optional(Type.String({ maxLength: 65535 })),
  branch: Type.Optional(Type.String({ maxLength: 100 })),
  new_branch: Type.Optional(Type.String({ maxLength: 100 })),
  author: Type.Optional(IdentitySchema),
  committer: Type.Optional(IdentitySchema),
  dates: Type.Optional(CommitDateOptionsSchema),
  signoff: Type.Optional(Type.Boolean()),
};

/** `CreateFileOptions`. */
export const CreateFileOptionsSchema = Type.Object({ ...FileOptions, content: Type.String() });

/** `UpdateFileOptions`. */
export const UpdateFileOptionsSchema = Type.Object({
  ...FileOptions,
  sha: Type.String(),
  content: Type.String(),
  from_path: Type.Optional(Type.String({ maxLength: 500 })),
});

/** `DeleteFileOptions`. */
export const DeleteFileOptionsSchema = Type.Object({ ...FileOptions, sha: Type.String() });

/** `ChangeFileOperation`. */
export const ChangeFileOperationSchema = Type.Object({
  operation: Type.Union([
    Type.Literal('create'),
    Type.Literal('update'),
    Type.Literal('upload'),
    Type.Literal('rename'),
    Type.Literal('delete'),
  ]),
  path: Type.String(),
  content: Type.Optional(Type.String()),
  sha: Type.Optional(Type.String()),
  from_path: Type.Optional(Type.String({ maxLength: 500 })),
});

/** `ChangeFilesOptions`. */
export const ChangeFilesOptionsSchema = Type.Object({
  ...FileOptions,
  files: Type.Array(ChangeFileOperationSchema, { maxItems: 1000 }),
});

/** `FileCommitResponse`. */
export const FileCommitResponseSchema = Type.Object({
  url: Type.String(),
  sha: Type.String(),
  created: Type.String({ format: 'date-time' }),
  html_url: Type.String(),
  author: CommitUserSchema,
  committer: CommitUserSchema,
  parents: Type.Array(CommitMetaSchema),
  message: Type.String(),
  tree: CommitMetaSchema,
});
export type FileCommitResponse = Static<typeof FileCommitResponseSchema>;

/** `FileResponse`. */
export const FileResponseSchema = Type.Object({
  content: ContentsResponseSchema,
  commit: FileCommitResponseSchema,
  verification: CommitVerificationSchema,
});

/** `FileDeleteResponse`: `content` is always null. */
export const FileDeleteResponseSchema = Type.Object({
  content: Type.Null(),
  commit: FileCommitResponseSchema,
  verification: CommitVerificationSchema,
});

/** `FilesResponse`: one entry per changed path, null for deleted ones. */
export const FilesResponseSchema = Type.Object({
  files: Type.Array(Type.Union([ContentsResponseSchema, Type.Null()])),
  commit: FileCommitResponseSchema,
  verification: CommitVerificationSchema,
});
