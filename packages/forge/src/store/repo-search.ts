/**
 * Repository listings in SQL: Gitea's `SearchRepositoryCondition` (models/repo/repo_list.go) over the
 * columns the forge has, intersected with the same visibility rule GET /repos/{owner}/{repo} applies
 * (services/repo-permission.ts), so a listing never shows — or counts — a repository its reader would get
 * 404 for. The forge has no forks, mirrors, templates, stars or topics: filters on those match what Gitea
 * would match for a site without them.
 */
import { type Expression, type ExpressionBuilder, type Kysely, type SqlBool, sql } from 'kysely';
import {
  AccessMode,
  type Database,
  type RepositoryRow,
  type UserRow,
  UserType,
  Visibility,
} from './schema.js';

type Eb = ExpressionBuilder<Database & { owner: Database['user'] }, 'repository' | 'owner'>;

/** Who is listing: null for anonymous callers. */
export interface RepoListViewer {
  id: number;
  isAdmin: boolean;
  isRestricted: boolean;
}

/** Sortable repository columns; columns the forge does not have (size, stars, forks) sort as equal. */
export type RepoSortColumn = 'name' | 'owner_name' | 'created_unix' | 'updated_unix' | 'id' | 'none';

export interface RepoListFilter {
  viewer: RepoListViewer | null;
  /** false: only public repositories of public owners (anonymous, `private=false`, public-only tokens). */
  includePrivate: boolean;
  /** Lower-cased comma-separated keyword as given (each part matches as a substring); '' = none. */
  keyword: string;
  topicOnly: boolean;
  includeDescription: boolean;
  /** Repositories this user owns and/or collaborates on (see `collaborate`). */
  ownerId?: number;
  /** With ownerId: true = only collaborations, false = only owned, undefined = both. */
  collaborate?: boolean;
  /** Repositories owned by exactly this user (the per-owner listings). */
  exactOwnerId?: number;
  teamId?: number;
  starredById?: number;
  isPrivate?: boolean;
  template?: boolean;
  fork?: boolean;
  mirror?: boolean;
  archived?: boolean;
  orderBy: Array<{ column: RepoSortColumn; direction: 'asc' | 'desc' }>;
  /** Repositories of this owner first. */
  priorityOwnerId?: number;
  /**
   * Only these repositories (a repository-scoped token's). Part of the condition, so the count and the
   * pages cover exactly what is shown.
   */
  onlyIds?: readonly number[];
  offset: number;
  limit: number;
}

/** Escapes LIKE wildcards so user text matches literally, never as a pattern. */
function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function like(column: Expression<unknown>, text: string, substring = true): Expression<SqlBool> {
  const pattern = substring ? `%${escapeLike(text)}%` : escapeLike(text);
  return sql<SqlBool>`lower(${column}) LIKE ${pattern} ESCAPE '\\'`;
}

const FALSE = sql<SqlBool>`1 = 0`;

/** The viewer's teams in the owning organisation that cover the repository and grant any unit. */
function coveringTeam(eb: Eb, viewerId: number) {
  return eb.exists(
    eb
      .selectFrom('team')
      .innerJoin('team_user', 'team_user.team_id', 'team.id')
      .select('team.id')
      .whereRef('team.org_id', '=', 'repository.owner_id')
      .where('team_user.uid', '=', viewerId)
      .where((inner) =>
        inner.or([
          inner('team.includes_all_repositories', '=', 1),
          inner.exists(
            inner
              .selectFrom('team_repo')
              .select('team_repo.id')
              .whereRef('team_repo.team_id', '=', 'team.id')
              .whereRef('team_repo.repo_id', '=', 'repository.id'),
          ),
        ]),
      )
      .where((inner) =>
        inner.or([
          inner('team.authorize', '>=', AccessMode.Admin),
          inner.exists(
            inner
              .selectFrom('team_unit')
              .select('team_unit.id')
              .whereRef('team_unit.team_id', '=', 'team.id')
              .where('team_unit.access_mode', '>', AccessMode.None),
          ),
        ]),
      ),
  );
}

/**
 * The repositories `viewer` may read at all (Gitea's GetUserRepoPermission → HasAnyUnitAccess), written
 * as a condition: owner visible (or the viewer a collaborator), then public-read, collaboration or a team.
 */
function visibleTo(eb: Eb, viewer: RepoListViewer | null): Expression<SqlBool> {
  if (!viewer) {
    return eb.and([eb('repository.is_private', '=', 0), eb('owner.visibility', '=', Visibility.Public)]);
  }
  if (viewer.isAdmin) return sql<SqlBool>`1 = 1`;
  const member = eb.exists(
    eb
      .selectFrom('org_user')
      .select('org_user.id')
      .whereRef('org_user.org_id', '=', 'repository.owner_id')
      .where('org_user.uid', '=', viewer.id),
  );
  const collaborator = eb.exists(
    eb
      .selectFrom('collaboration')
      .select('collaboration.id')
      .whereRef('collaboration.repo_id', '=', 'repository.id')
      .where('collaboration.user_id', '=', viewer.id),
  );
  const ownerVisible = eb.or([
    eb('owner.visibility', '=', Visibility.Public),
    eb.and([
      eb('owner.visibility', '=', Visibility.Limited),
      viewer.isRestricted ? member : sql<SqlBool>`1 = 1`,
    ]),
    eb.and([
      eb('owner.visibility', '=', Visibility.Private),
      eb('owner.type', '=', UserType.Organization),
      member,
    ]),
    collaborator,
  ]);
  const readable = eb.or([
    viewer.isRestricted ? FALSE : eb('repository.is_private', '=', 0),
    collaborator,
    eb.and([eb('owner.type', '=', UserType.Organization), coveringTeam(eb, viewer.id)]),
  ]);
  return eb.or([eb('repository.owner_id', '=', viewer.id), eb.and([ownerVisible, readable])]);
}

/** Gitea's collaboration condition for `uid`: repositories it does not own but reaches some other way. */
function collaborationOf(eb: Eb, uid: number, includePrivate: boolean): Expression<SqlBool> {
  const reached = eb.or([
    eb(
      'repository.id',
      'in',
      eb.selectFrom('collaboration').select('collaboration.repo_id').where('collaboration.user_id', '=', uid),
    ),
    eb(
      'repository.id',
      'in',
      eb
        .selectFrom('team_repo')
        .innerJoin('team_user', 'team_user.team_id', 'team_repo.team_id')
        .select('team_repo.repo_id')
        .where('team_user.uid', '=', uid),
    ),
    // Teams that include every repository of their organisation need no team_repo row here.
    eb(
      'repository.owner_id',
      'in',
      eb
        .selectFrom('team')
        .innerJoin('team_user', 'team_user.team_id', 'team.id')
        .select('team.org_id')
        .where('team_user.uid', '=', uid)
        .where('team.includes_all_repositories', '=', 1),
    ),
    // Public repositories of private organisations the user is a member of.
    eb.and([
      eb('repository.is_private', '=', 0),
      eb(
        'repository.owner_id',
        'in',
        eb
          .selectFrom('org_user')
          .innerJoin('user', 'user.id', 'org_user.org_id')
          .select('org_user.org_id')
          .where('org_user.uid', '=', uid)
          .where('user.type', '=', UserType.Organization)
          .where('user.visibility', '=', Visibility.Private),
      ),
    ]),
  ]);
  const conditions = [eb('repository.owner_id', '!=', uid), reached];
  if (!includePrivate) {
    // Without private results, organisations whose membership the user keeps private are left out.
    conditions.push(
      eb(
        'repository.owner_id',
        'not in',
        eb
          .selectFrom('org_user')
          .select('org_user.org_id')
          .where('org_user.uid', '=', uid)
          .where('org_user.is_public', '=', 0),
      ),
    );
  }
  return eb.and(conditions);
}

function keywordCondition(eb: Eb, filter: RepoListFilter): Expression<SqlBool> {
  // The forge has no topics: a topic-only search matches nothing.
  if (filter.topicOnly) return FALSE;
  const keyword = filter.keyword;
  const ownerAndName =
    filter.teamId === undefined && keyword.split('/').length === 2 ? keyword.split('/') : null;
  const matches: Expression<SqlBool>[] = [];
  for (const part of keyword.split(',')) {
    matches.push(like(sql.ref('repository.lower_name'), part));
    if (ownerAndName) {
      matches.push(
        eb.and([
          like(sql.ref('repository.owner_name'), ownerAndName[0]!),
          like(sql.ref('repository.lower_name'), ownerAndName[1]!),
        ]),
      );
    }
    if (filter.includeDescription) matches.push(like(sql.ref('repository.description'), part));
  }
  return eb.or(matches);
}

function whereOf(filter: RepoListFilter) {
  return (eb: Eb): Expression<SqlBool> => {
    const conditions: Expression<SqlBool>[] = [visibleTo(eb, filter.viewer)];
    if (filter.onlyIds !== undefined) {
      conditions.push(filter.onlyIds.length ? eb('repository.id', 'in', [...filter.onlyIds]) : FALSE);
    }
    if (!filter.includePrivate) {
      conditions.push(eb('repository.is_private', '=', 0), eb('owner.visibility', '=', Visibility.Public));
    }
    if (filter.exactOwnerId !== undefined)
      conditions.push(eb('repository.owner_id', '=', filter.exactOwnerId));
    if (filter.isPrivate !== undefined)
      conditions.push(eb('repository.is_private', '=', filter.isPrivate ? 1 : 0));
    // No templates, forks, mirrors or stars: asking for them finds nothing; excluding them excludes nothing.
    if (filter.template === true || filter.fork === true || filter.mirror === true) conditions.push(FALSE);
    if (filter.starredById !== undefined && filter.starredById > 0) conditions.push(FALSE);
    if (filter.ownerId !== undefined && filter.ownerId > 0) {
      const access: Expression<SqlBool>[] = [];
      if (filter.collaborate !== true) access.push(eb('repository.owner_id', '=', filter.ownerId));
      if (filter.collaborate !== false) {
        access.push(collaborationOf(eb, filter.ownerId, filter.includePrivate));
      }
      conditions.push(eb.or(access));
    }
    if (filter.teamId !== undefined && filter.teamId > 0) {
      conditions.push(
        eb.or([
          eb(
            'repository.id',
            'in',
            eb
              .selectFrom('team_repo')
              .select('team_repo.repo_id')
              .where('team_repo.team_id', '=', filter.teamId),
          ),
          eb(
            'repository.owner_id',
            'in',
            eb
              .selectFrom('team')
              .select('team.org_id')
              .where('team.id', '=', filter.teamId)
              .where('team.includes_all_repositories', '=', 1),
          ),
        ]),
      );
    }
    if (filter.keyword !== '') conditions.push(keywordCondition(eb, filter));
    if (filter.archived !== undefined)
      conditions.push(eb('repository.is_archived', '=', filter.archived ? 1 : 0));
    return eb.and(conditions);
  };
}

/** One page of repositories (with owners) matching the filter, and how many match in all. */
export async function listRepositories(
  db: Kysely<Database>,
  filter: RepoListFilter,
): Promise<{ rows: Array<{ repo: RepositoryRow; owner: UserRow }>; total: number }> {
  const base = () =>
    db
      .withTables<{ owner: Database['user'] }>()
      .selectFrom('repository')
      .innerJoin('user as owner', 'owner.id', 'repository.owner_id')
      .where(whereOf(filter) as never);
  let query = base().selectAll('repository');
  if (filter.priorityOwnerId !== undefined && filter.priorityOwnerId > 0) {
    // Gitea: CASE WHEN owner_id = ? THEN 0 ELSE owner_id END, then the requested order.
    query = query.orderBy(
      sql`CASE WHEN ${sql.ref('repository.owner_id')} = ${filter.priorityOwnerId} THEN 0 ELSE ${sql.ref('repository.owner_id')} END`,
    );
  } else if (filter.keyword.split('/').length === 2) {
    // "owner/repo" keywords put the repositories of a matching owner first.
    const ownerName = filter.keyword.split('/')[0]!;
    query = query.orderBy(
      sql`CASE WHEN ${like(sql.ref('repository.owner_name'), ownerName, false)} THEN 0 ELSE 1 END`,
    );
  }
  for (const { column, direction } of filter.orderBy) {
    if (column !== 'none') query = query.orderBy(`repository.${column}`, direction);
  }
  // Gitea leaves ties to the database; the id makes pages stable.
  query = query.orderBy('repository.id', 'asc');
  const [repos, count] = await Promise.all([
    query.offset(filter.offset).limit(filter.limit).execute(),
    base()
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
  ]);
  const ownerIds = [...new Set(repos.map((repo) => repo.owner_id))];
  const owners = ownerIds.length
    ? await db.selectFrom('user').selectAll().where('id', 'in', ownerIds).execute()
    : [];
  const byId = new Map(owners.map((owner) => [owner.id, owner]));
  return {
    rows: repos.flatMap((repo) => {
      const owner = byId.get(repo.owner_id);
      return owner ? [{ repo, owner }] : [];
    }),
    total: Number(count.n),
  };
}
