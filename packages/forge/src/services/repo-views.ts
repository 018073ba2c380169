/**
 * What a `Repository` object shows a viewer: the repository, its owner, the viewer's permission on it and
 * the counters the forge backs. Services gather these; convert/repository.ts renders them.
 */
import type { RepositoryWithOwner } from '../store/repositories.js';
import { findRepositoriesWithOwners } from '../store/repositories.js';
import type { RepositoryRow, UserRow } from '../store/schema.js';
import type { ServiceContext } from './context.js';
import { getRepoPermission } from './permissions.js';
import { countPublishedReleases } from './releases.js';
import type { RepoPermission } from './repo-permission.js';

export interface RepositoryView {
  repo: RepositoryRow;
  owner: UserRow;
  permission: RepoPermission;
  releaseCount: number;
}

/** One repository as `viewer` sees it. */
export async function repositoryView(
  ctx: ServiceContext,
  repo: RepositoryRow,
  owner: UserRow,
  viewer: UserRow | null,
): Promise<RepositoryView> {
  const permission = await getRepoPermission(ctx.db, repo, owner, viewer);
  return { repo, owner, permission, releaseCount: await countPublishedReleases(ctx.db, repo.id) };
}

/** Views of repositories in the order given. */
export async function repositoryViews(
  ctx: ServiceContext,
  rows: readonly RepositoryWithOwner[],
  viewer: UserRow | null,
): Promise<RepositoryView[]> {
  const views: RepositoryView[] = [];
  for (const { repo, owner } of rows) views.push(await repositoryView(ctx, repo, owner, viewer));
  return views;
}

/**
 * Views of repositories that rows refer to by id (activity feeds), each with the viewer's permission as
 * Gitea's `ToActivity` renders them; ids that no longer resolve are absent.
 */
export async function repositoryViewsById(
  ctx: ServiceContext,
  ids: readonly number[],
  viewer: UserRow | null,
): Promise<Map<number, RepositoryView>> {
  const found = await findRepositoriesWithOwners(
    ctx.db,
    [...new Set(ids)].filter((id) => id > 0),
  );
  const views = await repositoryViews(ctx, found, viewer);
  return new Map(views.map((view) => [view.repo.id, view]));
}
