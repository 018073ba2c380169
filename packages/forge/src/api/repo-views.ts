import { toRepository } from '../convert/repository.js';
import type { ServiceContext } from '../services/context.js';
import { getRepoPermission } from '../services/permissions.js';
import { countPublishedReleases } from '../services/releases.js';
import { findRepositoriesWithOwners } from '../store/repositories.js';
import type { UserRow } from '../store/schema.js';
import type { Repository } from './schemas/repo.js';

/**
 * Repository objects for rows that refer to repositories by id (activity feeds), each rendered with the
 * viewer's permissions as Gitea's `ToActivity` does.
 */
export async function repositoryViews(
  ctx: ServiceContext,
  ids: readonly number[],
  viewer: UserRow | null,
): Promise<Map<number, Repository>> {
  const views = new Map<number, Repository>();
  for (const { repo, owner } of await findRepositoriesWithOwners(
    ctx.db,
    [...new Set(ids)].filter((id) => id > 0),
  )) {
    const permission = await getRepoPermission(ctx.db, repo, owner, viewer);
    views.set(
      repo.id,
      toRepository(ctx.config, repo, owner, viewer, permission, {
        releases: await countPublishedReleases(ctx.db, repo.id),
      }),
    );
  }
  return views;
}
