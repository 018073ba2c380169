import { type Static, Type } from 'typebox';
import { QueryBool, QueryDateTime, QueryInt, QueryString } from './query.js';
import { UserSchema } from './user.js';

/** `CommitMeta`: a commit (or tree) id with its API link. */
export const CommitMetaSchema = Type.Object({
  url: Type.String(),
  sha: Type.String(),
  created: Type.String({ format: 'date-time' }),
});
export type CommitMeta = Static<typeof CommitMetaSchema>;

/** `CommitUser`: name, e-mail and the date as the commit records it (RFC 3339). */
export const CommitUserSchema = Type.Object({
  name: Type.String(),
  email: Type.String(),
  date: Type.String(),
});
export type CommitUser = Static<typeof CommitUserSchema>;

/** `PayloadCommitVerification` of an unsigned commit (the forge verifies no signatures). */
export const CommitVerificationSchema = Type.Object({
  verified: Type.Boolean(),
  reason: Type.String(),
  signature: Type.String(),
  signer: Type.Null(),
  payload: Type.String(),
});
export type CommitVerification = Static<typeof CommitVerificationSchema>;

/** `RepoCommit`. */
export const RepoCommitSchema = Type.Object({
  url: Type.String(),
  author: CommitUserSchema,
  committer: CommitUserSchema,
  message: Type.String(),
  tree: CommitMetaSchema,
  verification: Type.Union([CommitVerificationSchema, Type.Null()]),
});

/** `CommitAffectedFiles`. */
export const CommitAffectedFilesSchema = Type.Object({ filename: Type.String(), status: Type.String() });

/** `CommitStats`. */
export const CommitStatsSchema = Type.Object({
  total: Type.Integer(),
  additions: Type.Integer(),
  deletions: Type.Integer(),
});

/** Gitea's `Commit` in its emitted field order (the embedded CommitMeta first). */
export const CommitSchema = Type.Object({
  url: Type.String(),
  sha: Type.String(),
  created: Type.String({ format: 'date-time' }),
  html_url: Type.String(),
  commit: RepoCommitSchema,
  author: Type.Union([UserSchema, Type.Null()]),
  committer: Type.Union([UserSchema, Type.Null()]),
  parents: Type.Array(CommitMetaSchema),
  files: Type.Union([Type.Array(CommitAffectedFilesSchema), Type.Null()]),
  stats: Type.Union([CommitStatsSchema, Type.Null()]),
});
export type Commit = Static<typeof CommitSchema>;

const CommitDetailQuery = {
  stat: QueryBool("include diff stats for every commit (disable for speedup, default 'true')"),
  verification: QueryBool("include verification for every commit (disable for speedup, default 'true')"),
  files: QueryBool("include a list of affected files for every commit (disable for speedup, default 'true')"),
};

/** Query of `GET /repos/{owner}/{repo}/commits`. */
export const CommitListQuerySchema = Type.Object({
  sha: QueryString("SHA or branch to start listing commits from (usually 'master')"),
  path: QueryString('filepath of a file/dir'),
  since: QueryDateTime('Only commits after this date will be returned (ISO 8601 format)'),
  until: QueryDateTime('Only commits before this date will be returned (ISO 8601 format)'),
  ...CommitDetailQuery,
  page: QueryInt('page number of results to return (1-based)'),
  limit: QueryInt("page size of results (ignored if used with 'path')"),
  not: QueryString('commits that match the given specifier will not be listed.'),
});

/** Query of `GET /repos/{owner}/{repo}/git/commits/{sha}`. */
export const CommitQuerySchema = Type.Object(CommitDetailQuery);

/** `GitObject`. */
export const GitObjectSchema = Type.Object({ type: Type.String(), sha: Type.String(), url: Type.String() });

/** `Reference`. */
export const ReferenceSchema = Type.Object({
  ref: Type.String(),
  url: Type.String(),
  object: GitObjectSchema,
});
export type Reference = Static<typeof ReferenceSchema>;
