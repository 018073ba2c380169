import { type Static, Type } from 'typebox';
import { PageQuery, QueryBool, QueryDate } from './query.js';
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

/** Query of `GET /users/{username}/activities/feeds`. */
export const ActivityFeedQuerySchema = Type.Object({
  'only-performed-by': QueryBool('if true, only show actions performed by the requested user'),
  date: QueryDate('the date of the activities to be found'),
  ...PageQuery,
});
