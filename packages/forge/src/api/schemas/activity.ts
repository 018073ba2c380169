import { type Static, Type } from '@sinclair/typebox';
import { UserSchema } from './user.js';

/** Gitea's `Activity`; `repo` is the full Repository object (or null when the row has no repository). */
export const ActivitySchema = Type.Object({
  id: Type.Integer(),
  user_id: Type.Integer(),
  op_type: Type.String(),
  act_user_id: Type.Integer(),
  act_user: UserSchema,
  repo_id: Type.Integer(),
  repo: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
  comment_id: Type.Integer(),
  comment: Type.Null(),
  ref_name: Type.String(),
  is_private: Type.Boolean(),
  content: Type.String(),
  created: Type.String(),
});
export type Activity = Static<typeof ActivitySchema>;
