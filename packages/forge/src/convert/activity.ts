import { opTypeName } from '../store/action-types.js';
import type { ActionRow } from '../store/schema.js';
import type { Activity } from '../structs/activity.js';
import type { User } from '../structs/user.js';
import { rfc3339 } from './time.js';

/**
 * Gitea's `convert.ToActivity`. The actor (Ghost when deleted) and the repository come converted for
 * the viewer: a feed page converts each once however many of its rows name them.
 */
export function toActivity(action: ActionRow, actor: User, repo: Record<string, unknown> | null): Activity {
  return {
    id: action.id,
    user_id: action.user_id,
    op_type: opTypeName(action.op_type),
    act_user_id: action.act_user_id,
    act_user: actor,
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
