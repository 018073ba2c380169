import { Type } from 'typebox';

/** A repository a token is limited to, as the token object shows it (Forgejo's RepositoryMeta). */
export const TokenRepositorySchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  owner: Type.String(),
  full_name: Type.String(),
});

/** Gitea's `AccessToken`; `sha1` is the plain token, non-empty only in the create response. */
export const AccessTokenSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  sha1: Type.String(),
  token_last_eight: Type.String(),
  scopes: Type.Array(Type.String()),
  /** In lists only (Gitea's create answer has neither time). */
  created_at: Type.Optional(Type.String({ format: 'date-time' })),
  /** In lists only: the token's last use, to within a minute (services/token-use.ts); its creation until used. */
  last_used_at: Type.Optional(Type.String({ format: 'date-time' })),
  /** Forgejo's repository-scoped tokens: present only on tokens limited to repositories. */
  repositories: Type.Optional(Type.Array(TokenRepositorySchema)),
});

/** `CreateAccessTokenOption`. */
export const CreateAccessTokenOptionSchema = Type.Object({
  // Gitea's column is a VARCHAR(255); longer names would not fit the (uid, name) index either.
  name: Type.String({ minLength: 1, maxLength: 255 }),
  scopes: Type.Optional(Type.Array(Type.String())),
  /** Forgejo's repository-scoped tokens: the token reaches only these repositories. */
  repositories: Type.Optional(
    Type.Array(
      Type.Object({ owner: Type.String({ maxLength: 255 }), name: Type.String({ maxLength: 255 }) }),
      { maxItems: 100 },
    ),
  ),
});
