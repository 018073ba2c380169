import type { ForgeConfig } from '../config.js';
import { opTypeName } from '../services/activity.js';
import type { ActionRow, UserRow } from '../store/schema.js';
import type { Activity } from '../structs/activity.js';
import { rfc3339 } from './time.js';
import { toUser } from './user.js';

/** Gitea's `convert.ToActivity`; the actor is rendered for the viewer (Ghost when deleted). */
export function toActivity(
  config: ForgeConfig,
  action: ActionRow,
  actor: UserRow,
  repo: Record<string, unknown> | null,
  viewer: UserRow | null,
): Activity {
  return {
    id: action.id,
    user_id: action.user_id,
    op_type: opTypeName(action.op_type),
    act_user_id: action.act_user_id,
    act_user: toUser(config, actor, viewer),
    repo_id: action.repo_id,
    repo,
    comment_id: action.comment_id,
    comment: null,
    ref_name: action.ref_name,
    is_private: action.is_private === 1,
    content: action.content,
    created: rfc3339(action.created_unix),
  };
}
