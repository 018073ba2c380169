/**
 * Access re-checked when a delivery is about to leave (GHSA-66m4-5jjr-2rg5: Gitea kept delivering
 * after a hook's creator lost access). A hook speaks for the user who created it: that user must still
 * be allowed to manage it, and must still be able to see the repository the event happened in.
 * Returns why the delivery is dropped, or null when it may go.
 */
import type { ServiceContext } from '../services/context.js';
import { isOrgOwner } from '../services/orgs.js';
import { getRepoPermission } from '../services/permissions.js';
import { findRepositoryById } from '../store/repositories.js';
import { type HookTaskRow, UserType, type WebhookRow } from '../store/schema.js';
import { findUserById } from '../store/users.js';

export async function deliveryRefusal(
  ctx: ServiceContext,
  hook: WebhookRow,
  task: Pick<HookTaskRow, 'repo_id'>,
): Promise<string | null> {
  const creator = await findUserById(ctx.db, hook.creator_id);
  if (!creator) return 'the hook creator no longer exists';
  if (creator.is_active === 0 || creator.prohibit_login === 1)
    return 'the hook creator may no longer sign in';
  const siteAdmin = creator.is_admin === 1;
  if (hook.is_system_webhook === 1) {
    if (!siteAdmin) return 'the hook creator is no longer a site administrator';
  } else if (hook.repo_id > 0) {
    const repo = await findRepositoryById(ctx.db, hook.repo_id);
    const owner = repo && (await findUserById(ctx.db, repo.owner_id));
    if (!repo || !owner) return 'the repository no longer exists';
    const permission = await getRepoPermission(ctx.db, repo, owner, creator);
    if (!siteAdmin && !permission.isAdmin()) return 'the hook creator no longer administers the repository';
  } else {
    const owner = await findUserById(ctx.db, hook.owner_id);
    if (!owner) return 'the hook owner no longer exists';
    if (owner.type === UserType.Organization) {
      if (!siteAdmin && !(await isOrgOwner(ctx, owner.id, creator)))
        return 'the hook creator no longer owns the organization';
    } else if (!siteAdmin && owner.id !== creator.id) {
      return 'the hook creator is not the hook owner';
    }
  }
  // The event's repository must still be visible to the creator (a repository deleted since is fine:
  // its deletion is the event).
  if (task.repo_id > 0 && !siteAdmin) {
    const repo = await findRepositoryById(ctx.db, task.repo_id);
    const owner = repo && (await findUserById(ctx.db, repo.owner_id));
    if (repo && owner) {
      const permission = await getRepoPermission(ctx.db, repo, owner, creator);
      if (!permission.hasAnyUnitAccess()) return 'the hook creator can no longer see the repository';
    }
  }
  return null;
}
