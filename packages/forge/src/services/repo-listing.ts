/**
 * Repository listings as Gitea clients reach for them: `GET /repos/search` (routers/api/v1/repo/repo.go
 * Search), `GET /user/repos`, `GET /users/{u}/repos` and `GET /orgs/{org}/repos` (routers/api/v1/user/repo.go).
 * Each shows exactly the repositories GET /repos/{owner}/{repo} would show the caller, and counts only those.
 */
import { Invalid } from '../errors.js';
import { listRepositories, type RepoListFilter, type RepoSortColumn } from '../store/repo-search.js';
import type { UserRow } from '../store/schema.js';
import type { ServiceContext } from './context.js';
import { type RepositoryView, repositoryViews } from './repo-views.js';
import type { TokenRepositories } from './token-repositories.js';

/**
 * Who lists: the signed-in user (or null), whether their token is limited to public resources, and the
 * repositories a repository-scoped token is limited to (null: not limited).
 */
export interface Lister {
  user: UserRow | null;
  publicOnly: boolean;
  repositories: TokenRepositories;
}

export interface Page {
  offset: number;
  limit: number;
}

/** The query of `GET /repos/search`, already read from the query string (Gitea's Form* semantics). */
export interface RepoSearchQuery {
  keyword: string;
  topicOnly: boolean;
  includeDescription: boolean;
  uid: number;
  priorityOwnerId: number;
  teamId: number;
  starredBy: number;
  /** `private` as given: undefined when absent (Gitea defaults it to true for signed-in callers). */
  private?: boolean;
  isPrivate?: boolean;
  template?: boolean;
  archived?: boolean;
  exclusive: boolean;
  mode: string;
  sort: string;
  order: string;
  page: Page;
}

type Order = RepoListFilter['orderBy'];

/** Gitea's `OrderByMap` (models/repo/search.go); size, stars and forks are 0 for every forge repository. */
const ORDER_BY: Record<string, Record<string, Order>> = Object.fromEntries(
  (['asc', 'desc'] as const).map((direction) => {
    const by = (column: RepoSortColumn): Order => [{ column, direction }];
    return [
      direction,
      {
        alpha: [
          { column: 'owner_name', direction },
          { column: 'name', direction },
        ],
        created: by('created_unix'),
        updated: by('updated_unix'),
        size: by('none'),
        git_size: by('none'),
        lfs_size: by('none'),
        id: by('id'),
        stars: by('none'),
        forks: by('none'),
      },
    ];
  }),
);

/** Gitea's default order when `sort` is absent: `name ASC`. */
const BY_NAME: Order = [{ column: 'name', direction: 'asc' }];

/** The conditions every listing applies for its caller: what the user may see, through this credential. */
function callerFilter(lister: Lister): Pick<RepoListFilter, 'viewer' | 'onlyIds'> {
  const user = lister.user;
  return {
    viewer: user
      ? { id: user.id, isAdmin: user.is_admin === 1, isRestricted: user.is_restricted === 1 }
      : null,
    // In the query, not after it: X-Total-Count and Link then count only what the token may list.
    onlyIds: lister.repositories === null ? undefined : [...lister.repositories],
  };
}

/** `mode`: source, fork, mirror, collaborative (422 otherwise, as Gitea). */
function modeFilter(mode: string): Pick<RepoListFilter, 'fork' | 'mirror' | 'collaborate'> {
  switch (mode) {
    case '':
      return {};
    case 'source':
      return { fork: false, mirror: false };
    case 'fork':
      return { fork: true };
    case 'mirror':
      return { mirror: true };
    case 'collaborative':
      return { mirror: false, collaborate: true };
    default:
      throw new Invalid(`Invalid search mode: "${mode}"`);
  }
}

/** `sort` and `order` (order defaults to asc and only counts with a sort), 422 for unknown values. */
function orderFilter(sort: string, order: string): Order {
  if (sort === '') return BY_NAME;
  const byDirection = ORDER_BY[order || 'asc'];
  if (!byDirection) throw new Invalid(`Invalid sort order: "${order}"`);
  const orderBy = byDirection[sort];
  if (!orderBy) throw new Invalid(`Invalid sort mode: "${sort}"`);
  return orderBy;
}

/** `GET /repos/search`: Gitea's rules for every parameter, over what the caller may see. */
export async function searchRepositories(
  ctx: ServiceContext,
  lister: Lister,
  query: RepoSearchQuery,
): Promise<{ views: RepositoryView[]; total: number }> {
  const mode = modeFilter(query.mode);
  const orderBy = orderFilter(query.sort, query.order);
  // Private results need a signed-in caller whose token is not public-only; `private=false` opts out.
  const includePrivate = lister.user !== null && !lister.publicOnly && query.private !== false;
  const collaborate = query.exclusive ? false : mode.collaborate;
  const { rows, total } = await listRepositories(ctx.db, {
    ...callerFilter(lister),
    includePrivate,
    keyword: query.keyword.toLowerCase(),
    topicOnly: query.topicOnly,
    includeDescription: query.includeDescription,
    ownerId: query.uid > 0 ? query.uid : undefined,
    collaborate,
    teamId: query.teamId > 0 ? query.teamId : undefined,
    starredById: query.starredBy,
    isPrivate: query.isPrivate,
    template: query.template,
    fork: mode.fork,
    mirror: mode.mirror,
    archived: query.archived,
    orderBy,
    priorityOwnerId: query.priorityOwnerId > 0 ? query.priorityOwnerId : undefined,
    offset: query.page.offset,
    limit: query.page.limit,
  });
  return { views: await repositoryViews(ctx, rows, lister.user), total };
}

/** `GET /user/repos`: what the caller owns or reaches as collaborator or team member, by name. */
export async function listMyRepositories(
  ctx: ServiceContext,
  lister: Lister & { user: UserRow },
  page: Page,
): Promise<{ views: RepositoryView[]; total: number }> {
  const { rows, total } = await listRepositories(ctx.db, {
    ...callerFilter(lister),
    includePrivate: !lister.publicOnly,
    keyword: '',
    topicOnly: false,
    includeDescription: true,
    ownerId: lister.user.id,
    orderBy: BY_NAME,
    offset: page.offset,
    limit: page.limit,
  });
  return { views: await repositoryViews(ctx, rows, lister.user), total };
}

/**
 * `GET /users/{u}/repos` and `GET /orgs/{org}/repos`: the owner's repositories in id order, private ones
 * only for signed-in callers who may read them. Gitea counts the owner's private repositories in
 * X-Total-Count even when it hides them; the forge counts what it shows, so the header reveals nothing.
 */
export async function listOwnerRepositories(
  ctx: ServiceContext,
  lister: Lister,
  owner: UserRow,
  page: Page,
): Promise<{ views: RepositoryView[]; total: number }> {
  const { rows, total } = await listRepositories(ctx.db, {
    ...callerFilter(lister),
    includePrivate: lister.user !== null && !lister.publicOnly,
    keyword: '',
    topicOnly: false,
    includeDescription: false,
    exactOwnerId: owner.id,
    orderBy: [{ column: 'id', direction: 'asc' }],
    offset: page.offset,
    limit: page.limit,
  });
  return { views: await repositoryViews(ctx, rows, lister.user), total };
}
