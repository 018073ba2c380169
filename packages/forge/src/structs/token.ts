import { Type } from 'typebox';

/** Gitea's `AccessToken`; `sha1` is the plain token, non-empty only in the create response. */
export const AccessTokenSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  sha1: Type.String(),
  token_last_eight: Type.String(),
  scopes: Type.Array(Type.String()),
});

/** `CreateAccessTokenOption`. */
export const CreateAccessTokenOptionSchema = Type.Object({
  // Gitea's column is a VARCHAR(255); longer names would not fit the (uid, name) index either.
  name: Type.String({ minLength: 1, maxLength: 255 }),
  scopes: Type.Optional(Type.Array(Type.String())),
});
