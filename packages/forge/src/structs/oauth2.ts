import { type Static, Type } from 'typebox';

/** Gitea's `OAuth2Application`; `client_secret` is non-empty only when the secret was just generated. */
export const OAuth2ApplicationSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  client_id: Type.String(),
  client_secret: Type.String(),
  confidential_client: Type.Boolean(),
  skip_secondary_authorization: Type.Boolean(),
  redirect_uris: Type.Array(Type.String()),
  created: Type.String({ format: 'date-time' }),
});
export type OAuth2Application = Static<typeof OAuth2ApplicationSchema>;

/** Gitea's `CreateOAuth2ApplicationOptions` (also the PATCH body); name and redirect URIs are required. */
export const CreateOAuth2ApplicationOptionsSchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  redirect_uris: Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { minItems: 1, maxItems: 64 }),
  confidential_client: Type.Optional(Type.Boolean()),
  skip_secondary_authorization: Type.Optional(Type.Boolean()),
});
export type CreateOAuth2ApplicationOptions = Static<typeof CreateOAuth2ApplicationOptionsSchema>;
