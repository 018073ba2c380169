import { type Static, Type } from 'typebox';
import { UserSchema } from './user.js';

/** Gitea's `PublicKey` (several keys are `omitempty`). */
export const PublicKeySchema = Type.Object({
  id: Type.Integer(),
  key: Type.String(),
  url: Type.Optional(Type.String()),
  title: Type.Optional(Type.String()),
  fingerprint: Type.Optional(Type.String()),
  created_at: Type.Optional(Type.String()),
  user: Type.Optional(UserSchema),
  read_only: Type.Optional(Type.Boolean()),
  key_type: Type.Optional(Type.String()),
});
export type PublicKey = Static<typeof PublicKeySchema>;

/** `CreateKeyOption`. */
export const CreateKeyOptionSchema = Type.Object({
  title: Type.String({ minLength: 1, maxLength: 50 }),
  key: Type.String({ minLength: 1 }),
  read_only: Type.Optional(Type.Boolean()),
});
