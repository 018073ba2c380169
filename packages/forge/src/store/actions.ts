import { type ExpressionBuilder, type Insertable, type Kysely, type SqlBool, sql } from 'kysely';
import type { ActionRow, ActionTable, Database } from './schema.js';

type Db = Kysely<Database>;

/** Records activity rows (one per receiver feed, as Gitea fans actions out). */
export async function insertActions(db: Db, rows: Array<Insertable<ActionTable>>): Promise<void> {
  if (rows.length === 0) return;
  // A multi-row insert on SQLite writes NULL (not the column default) for keys a row leaves out, so every
  // row carries every column.
  const complete = rows.map((row) => ({
    repo_id: 0,
    comment_id: 0,
    ref_name: '',
    is_private: 0 as const,
    is_deleted: 0 as const,
    content: '',
    ...row,
  }));
  await db.insertInto('action').values(complete).execute();
}

/** The viewer restrictions of Gitea's `activityQueryCondition`. */
export interface ActionViewer {
  /** Viewer id, or null when anonymous. */
  viewerId: number | null;
  /** Whether the requested user is an organization (it always sees its own acts). */
  requestedIsOrg: boolean;
  requestedId: number;
  /**
   * A restricted viewer reads only repositories given to it (owned, collaborator, team) and sees public
   * users only, as for repository reads and profiles (go-gitea/gitea#39004).
   */
  restricted: boolean;
}

/**
 * Rows a non-admin viewer may see: the acting user does not keep activity private and is visible to the
 * viewer (or is the viewer, or the requested organization, or an organization the requested user is in),
 * and the row's repository is one the viewer can read (public, own, collaborator, team).
 */
function viewerCondition(eb: ExpressionBuilder<Database, 'action'>, viewer: ActionViewer) {
  const id = viewer.viewerId;
  const actUser = sql.ref('action.act_user_id');
  const repo = sql.ref('action.repo_id');
  let actors: ReturnType<typeof sql<SqlBool>>;
  if (id === null) {
    actors = sql<SqlBool>`${actUser} IN (SELECT id FROM ${sql.table('user')} WHERE keep_activity_private = 0 AND visibility = 0)`;
  } else {
    const extra = viewer.requestedIsOrg
      ? sql`OR id = ${viewer.requestedId}`
      : sql`OR (type = 1 AND id IN (SELECT org_id FROM team_user WHERE uid = ${viewer.requestedId}))`;
    const visible = viewer.restricted ? sql`(0)` : sql`(0, 1)`;
    actors = sql<SqlBool>`${actUser} IN (SELECT id FROM ${sql.table('user')} WHERE (keep_activity_private = 0 AND visibility IN ${visible}) OR id = ${id} ${extra})`;
  }
  // Public repositories are readable by everyone but restricted users.
  const publicRepos = viewer.restricted ? sql`0 = 1` : sql`is_private = 0`;
  const repos =
    id === null
      ? sql<SqlBool>`(${repo} = 0 OR ${repo} IN (SELECT id FROM repository WHERE is_private = 0))`
      : sql<SqlBool>`(${repo} = 0 OR ${repo} IN (
          SELECT id FROM repository WHERE ${publicRepos} OR owner_id = ${id}
          UNION SELECT repo_id FROM collaboration WHERE user_id = ${id}
          UNION SELECT team_repo.repo_id FROM team_repo JOIN team_user ON team_user.team_id = team_repo.team_id WHERE team_user.uid = ${id}
          UNION SELECT repository.id FROM repository JOIN team ON team.org_id = repository.owner_id AND team.includes_all_repositories = 1
            JOIN team_user ON team_user.team_id = team.id WHERE team_user.uid = ${id}))`;
  return eb.and([actors, repos]);
}

/** Contribution counts per 15-minute UTC bucket of a user's rows newer than `since`. */
export async function heatmapBuckets(
  db: Db,
  filter: { userId: number; performedByUser: boolean; since: number; viewer: ActionViewer | null },
): Promise<Array<{ timestamp: number; contributions: number }>> {
  const bucket = sql<number>`(${sql.ref('action.created_unix')} / 900) * 900`;
  let query = db
    .selectFrom('action')
    .select([bucket.as('timestamp'), (eb) => eb.fn.countAll<number>().as('contributions')])
    .where('action.user_id', '=', filter.userId)
    .where('action.created_unix', '>', filter.since);
  if (filter.performedByUser) query = query.where('action.act_user_id', '=', filter.userId);
  const viewer = filter.viewer;
  if (viewer) query = query.where((eb) => viewerCondition(eb, viewer));
  const rows = await query.groupBy(bucket).orderBy(bucket).execute();
  return rows.map((r) => ({ timestamp: Number(r.timestamp), contributions: Number(r.contributions) }));
}

export interface FeedFilter {
  userId: number;
  onlyPerformedBy: boolean;
  includePrivate: boolean;
  /** Viewer restrictions; null = none (a site admin, or the user themself). */
  viewer: ActionViewer | null;
  /** Inclusive unix-second range of one day, when `date` was given. */
  between?: [number, number];
  offset: number;
  limit: number;
}

/** One page of a user's received feed (newest first) and the total. */
export async function listFeed(db: Db, filter: FeedFilter): Promise<{ rows: ActionRow[]; total: number }> {
  let query = db
    .selectFrom('action')
    .where('action.user_id', '=', filter.userId)
    .where('action.is_deleted', '=', 0);
  if (filter.onlyPerformedBy) query = query.where('action.act_user_id', '=', filter.userId);
  if (!filter.includePrivate) query = query.where('action.is_private', '=', 0);
  const viewer = filter.viewer;
  if (viewer) query = query.where((eb) => viewerCondition(eb, viewer));
  if (filter.between) {
    query = query
      .where('action.created_unix', '>=', filter.between[0])
      .where('action.created_unix', '<=', filter.between[1]);
  }
  const [rows, count] = await Promise.all([
    query
      .selectAll('action')
      .orderBy('action.created_unix', 'desc')
      .orderBy('action.id', 'desc')
      .offset(filter.offset)
      .limit(filter.limit)
      .execute(),
    query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}
