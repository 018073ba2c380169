import { type Insertable, type Kysely, type SqlBool, sql } from 'kysely';
import { compiledQuery, compiledShapedQuery } from './compiled-query.js';
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

/** The tables whose rows carry an actor and a repository: the action rows and their counts. */
type ActivityTable = 'action' | 'action_heatmap' | 'action_feed_count';

/**
 * Rows a non-admin viewer may see: the acting user does not keep activity private and is visible to the
 * viewer (or is the viewer, or the requested organization, or an organization the requested user is in),
 * and the row's repository is one the viewer can read (public, own, collaborator, team). The counts
 * tables carry the same actor and repository columns, so one condition serves the rows and the counts.
 *
 * The actor and the public-or-own repository tests look the row's user and repository up by primary key
 * (EXISTS): a list subquery (`IN (SELECT id FROM user WHERE …)`) would collect every public user and
 * repository of the site on each request.
 */
function viewerCondition(table: ActivityTable, viewer: ActionViewer) {
  const id = viewer.viewerId;
  const actUser = sql.ref(`${table}.act_user_id`);
  const repo = sql.ref(`${table}.repo_id`);
  const actor = sql`SELECT 1 FROM ${sql.table('user')} AS actor WHERE actor.id = ${actUser}`;
  const readable = sql`SELECT 1 FROM repository WHERE repository.id = ${repo}`;
  if (id === null) {
    return sql<SqlBool>`(EXISTS (${actor} AND actor.keep_activity_private = 0 AND actor.visibility = 0)
      AND (${repo} = 0 OR EXISTS (${readable} AND repository.is_private = 0)))`;
  }
  const extra = viewer.requestedIsOrg
    ? sql`OR actor.id = ${viewer.requestedId}`
    : sql`OR (actor.type = 1 AND actor.id IN (SELECT org_id FROM team_user WHERE uid = ${viewer.requestedId}))`;
  const visible = viewer.restricted ? sql`(0)` : sql`(0, 1)`;
  // Public repositories are readable by everyone but restricted users.
  const publicRepo = viewer.restricted ? sql`` : sql`repository.is_private = 0 OR`;
  return sql<SqlBool>`(EXISTS (${actor} AND ((actor.keep_activity_private = 0 AND actor.visibility IN ${visible})
        OR actor.id = ${id} ${extra}))
    AND (${repo} = 0 OR EXISTS (${readable} AND (${publicRepo} repository.owner_id = ${id})) OR ${repo} IN (
          SELECT repo_id FROM collaboration WHERE user_id = ${id}
          UNION SELECT team_repo.repo_id FROM team_repo JOIN team_user ON team_user.team_id = team_repo.team_id WHERE team_user.uid = ${id}
          UNION SELECT repository.id FROM repository JOIN team ON team.org_id = repository.owner_id AND team.includes_all_repositories = 1
            JOIN team_user ON team_user.team_id = team.id WHERE team_user.uid = ${id})))`;
}

/**
 * The activity statements are compiled once per shape (store/compiled-query.ts): a viewer changes their
 * SQL text only by being anonymous or not, by the requested user being an organization, and by being
 * restricted; the ids go in as values.
 */
function viewerShapeKey(viewer: ActionViewer | null): string {
  if (!viewer) return 'all';
  if (viewer.viewerId === null) return 'anonymous';
  return `${viewer.requestedIsOrg ? 'org' : 'user'}${viewer.restricted ? ':restricted' : ''}`;
}

/** `viewer`'s shape with the call's stand-ins for its ids (see compiledShapedQuery). */
function viewerWith(viewer: ActionViewer, viewerId: number, requestedId: number): ActionViewer {
  return { ...viewer, viewerId: viewer.viewerId === null ? null : viewerId, requestedId };
}

/** The viewer's ids as statement values (unused ones as 0). */
function viewerValues(viewer: ActionViewer | null): [number, number] {
  return [viewer?.viewerId ?? 0, viewer?.requestedId ?? 0];
}

/**
 * A repository-scoped token's repositories as one statement value: rows of other repositories (and rows
 * of none) are left out of the rows and of the counts alike. An empty list stands in as [-1] (no such
 * id), so `IN` always has an element; the list's length is part of the compiled statement's key.
 */
function repoIdsValue(onlyRepoIds: readonly number[] | undefined): number[] {
  return onlyRepoIds?.length ? [...onlyRepoIds] : [-1];
}

/** Width of a heatmap bucket: Gitea groups contributions by `created_unix / 900 * 900`. */
const BUCKET_SECONDS = 900;

export interface HeatmapFilter {
  userId: number;
  /** Count only the user's own acts (a user's heatmap; an organization's counts every row of its feed). */
  performedByUser: boolean;
  /** Count rows created after this unix second. */
  since: number;
  viewer: ActionViewer | null;
  /** Only rows of these repositories (a repository-scoped token's); undefined: no such limit. */
  onlyRepoIds?: readonly number[];
}

/** The window of a heatmap counting rows created after `since`, in 15-minute buckets. */
export interface HeatmapWindow {
  /** The first unix second counted. */
  first: number;
  /** The first bucket wholly inside the window: `first` rounded up to a bucket boundary. */
  whole: number;
}

export function heatmapWindow(since: number): HeatmapWindow {
  const first = since + 1;
  return { first, whole: Math.ceil(first / BUCKET_SECONDS) * BUCKET_SECONDS };
}

/**
 * Contribution counts per 15-minute UTC bucket of a user's rows newer than `since`, read from the
 * triggers' `action_heatmap` counts: one entry per bucket, actor and repository instead of one per row.
 * The buckets wholly after `since` come from the counts; the one `since` falls inside (rows after it
 * only) is counted on the action rows, so the answer is exactly that of counting the rows.
 */
export async function heatmapBuckets(
  db: Db,
  filter: HeatmapFilter,
): Promise<Array<{ timestamp: number; contributions: number }>> {
  const window = heatmapWindow(filter.since);
  const answer = await heatmapWholeBuckets(db, filter, window);
  const head = await heatmapHeadCount(db, filter, window);
  return head > 0 ? [{ timestamp: window.whole - BUCKET_SECONDS, contributions: head }, ...answer] : answer;
}

/** The buckets of `heatmapBuckets` wholly inside the window, oldest first. */
export async function heatmapWholeBuckets(
  db: Db,
  filter: HeatmapFilter,
  window: HeatmapWindow,
): Promise<Array<{ timestamp: number; contributions: number }>> {
  const rows = await wholeBuckets(
    db,
    filter,
    filter.userId,
    ...viewerValues(filter.viewer),
    window.whole,
    repoIdsValue(filter.onlyRepoIds),
  );
  return rows.map((r) => ({ timestamp: Number(r.timestamp), contributions: Number(r.contributions) }));
}

type HeatmapShape = Pick<HeatmapFilter, 'performedByUser' | 'viewer' | 'onlyRepoIds'>;
const heatmapShapeKey = (shape: HeatmapShape) =>
  `${shape.performedByUser}|${viewerShapeKey(shape.viewer)}|${shape.onlyRepoIds !== undefined}`;

const wholeBuckets = compiledShapedQuery(
  (
    db,
    shape: HeatmapShape,
    userId: number,
    viewerId: number,
    requestedId: number,
    whole: number,
    repoIds: number[],
  ) => {
    let buckets = db
      .selectFrom('action_heatmap')
      .select([
        'action_heatmap.bucket as timestamp',
        (eb) => eb.fn.sum<number>('action_heatmap.contributions').as('contributions'),
      ])
      .where('action_heatmap.user_id', '=', userId)
      .where('action_heatmap.bucket', '>=', whole);
    if (shape.performedByUser) buckets = buckets.where('action_heatmap.act_user_id', '=', userId);
    if (shape.onlyRepoIds) buckets = buckets.where('action_heatmap.repo_id', 'in', repoIds);
    if (shape.viewer) {
      buckets = buckets.where(
        viewerCondition('action_heatmap', viewerWith(shape.viewer, viewerId, requestedId)),
      );
    }
    return buckets.groupBy('action_heatmap.bucket').orderBy('action_heatmap.bucket');
  },
  heatmapShapeKey,
);

/**
 * The count of the bucket `since` falls inside (its rows after `since`), whose bucket starts at
 * `window.whole - 900`; 0 when the window starts on a bucket boundary.
 */
export async function heatmapHeadCount(
  db: Db,
  filter: HeatmapFilter,
  window: HeatmapWindow,
): Promise<number> {
  if (window.first === window.whole) return 0;
  const [row] = await headCount(
    db,
    filter,
    filter.userId,
    ...viewerValues(filter.viewer),
    window.first,
    window.whole,
    repoIdsValue(filter.onlyRepoIds),
  );
  return Number(row?.n ?? 0);
}

const headCount = compiledShapedQuery(
  (
    db,
    shape: HeatmapShape,
    userId: number,
    viewerId: number,
    requestedId: number,
    first: number,
    whole: number,
    repoIds: number[],
  ) => {
    let partial = db
      .selectFrom('action')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('action.user_id', '=', userId)
      .where('action.created_unix', '>=', first)
      .where('action.created_unix', '<', whole);
    if (shape.performedByUser) partial = partial.where('action.act_user_id', '=', userId);
    if (shape.onlyRepoIds) partial = partial.where('action.repo_id', 'in', repoIds);
    if (shape.viewer) {
      partial = partial.where(viewerCondition('action', viewerWith(shape.viewer, viewerId, requestedId)));
    }
    return partial;
  },
  heatmapShapeKey,
);

/** Seconds of a heatmap bucket (Gitea's `created_unix / 900 * 900`). */
export const HEATMAP_BUCKET_SECONDS = BUCKET_SECONDS;

/**
 * The generations (migration 012) of `userId`'s action rows and of who may see whose activity, as one
 * text: an answer built from the activity tables after reading it still holds while it reads the same.
 */
export async function activityGenerations(db: Db, userId: number): Promise<string> {
  const rows = await generationsOf(db, userId);
  let visibility = 0;
  let own = 0;
  for (const row of rows) {
    if (Number(row.scope) === 0) visibility = Number(row.generation);
    else own = Number(row.generation);
  }
  return `${visibility}.${own}`;
}

const generationsOf = compiledQuery((db, userId: number) =>
  db.selectFrom('activity_generation').select(['scope', 'generation']).where('scope', 'in', [0, userId]),
);

export interface FeedFilter {
  userId: number;
  onlyPerformedBy: boolean;
  includePrivate: boolean;
  /** Viewer restrictions; null = none (a site admin, or the user themself). */
  viewer: ActionViewer | null;
  /** Inclusive unix-second range of one day, when `date` was given. */
  between?: [number, number];
  /** Only rows of these repositories (a repository-scoped token's); undefined: no such limit. */
  onlyRepoIds?: readonly number[];
  offset: number;
  limit: number;
}

/**
 * One page of a user's received feed (newest first) and the total, in one statement where the route ran
 * two one after the other (a round trip each on PostgreSQL): each row carries the total as an
 * uncorrelated scalar subquery, which SQLite and PostgreSQL (an InitPlan) evaluate once per statement.
 * The total comes from the triggers' `action_feed_count` (one entry per actor, repository and privacy),
 * except for one day's feed, which counts that day's rows. An empty page has no row to carry the total:
 * it is read on its own.
 *
 * The rows' actors and repositories are not joined in: a join repeats an actor's 31 columns on every
 * row of the page, and PostgreSQL hashes the whole user table for it (EXPLAIN: 0.4 ms where the page
 * takes 0.1), which in the bench cost more than the round trips it saved.
 */
export async function listFeed(db: Db, filter: FeedFilter): Promise<{ rows: ActionRow[]; total: number }> {
  const [from, to] = filter.between ?? [0, 0];
  const values = [
    filter.userId,
    ...viewerValues(filter.viewer),
    from,
    to,
    repoIdsValue(filter.onlyRepoIds),
  ] as const;
  const page = await feedPage(db, filter, ...values, filter.offset, filter.limit);
  const first = page[0];
  if (first === undefined) {
    const total = filter.between
      ? Number((await feedDayCount(db, filter, ...values))[0]?.n ?? 0)
      : await feedTotal(db, filter);
    return { rows: [], total };
  }
  const rows: ActionRow[] = page.map(({ page_total: _, ...row }) => row);
  // SUM over no rows is NULL.
  return { rows, total: Number(first.page_total ?? 0) };
}

type FeedShape = Pick<
  FeedFilter,
  'onlyPerformedBy' | 'includePrivate' | 'viewer' | 'between' | 'onlyRepoIds'
>;
const feedShapeKey = (shape: FeedShape) =>
  `${shape.onlyPerformedBy}|${shape.includePrivate}|${viewerShapeKey(shape.viewer)}|${shape.between !== undefined}|${shape.onlyRepoIds !== undefined}`;

/** A feed query's values, in the order its compiled SQL takes them (see compiledShapedQuery). */
type FeedValues = [
  userId: number,
  viewerId: number,
  requestedId: number,
  from: number,
  to: number,
  repoIds: number[],
];

/** The feed rows `shape` lets through, of one day (`from`..`to`, inclusive) when it has `between`. */
function feedRows(
  db: Db,
  shape: FeedShape,
  ...[userId, viewerId, requestedId, from, to, repoIds]: FeedValues
) {
  let query = db.selectFrom('action').where('action.user_id', '=', userId).where('action.is_deleted', '=', 0);
  if (shape.onlyPerformedBy) query = query.where('action.act_user_id', '=', userId);
  if (shape.onlyRepoIds) query = query.where('action.repo_id', 'in', repoIds);
  if (!shape.includePrivate) query = query.where('action.is_private', '=', 0);
  if (shape.viewer)
    query = query.where(viewerCondition('action', viewerWith(shape.viewer, viewerId, requestedId)));
  if (shape.between) {
    query = query.where('action.created_unix', '>=', from).where('action.created_unix', '<=', to);
  }
  return query;
}

const feedPage = compiledShapedQuery(
  (
    db,
    shape: FeedShape,
    ...[userId, viewerId, requestedId, from, to, repoIds, offset, limit]: [...FeedValues, number, number]
  ) =>
    feedRows(db, shape, userId, viewerId, requestedId, from, to, repoIds)
      .selectAll('action')
      .select(() =>
        (shape.between
          ? feedDayCountQuery(db, shape, userId, viewerId, requestedId, from, to, repoIds)
          : feedCountQuery(db, shape, userId, viewerId, requestedId, repoIds)
        ).as('page_total'),
      )
      .orderBy('action.created_unix', 'desc')
      .orderBy('action.id', 'desc')
      .offset(offset)
      .limit(limit),
  feedShapeKey,
);

/** The rows of one day's feed `shape` lets through (`date`: no counts table serves a day). */
function feedDayCountQuery(db: Db, shape: FeedShape, ...values: FeedValues) {
  return feedRows(db, shape, ...values).select((eb) => eb.fn.countAll<number>().as('n'));
}

const feedDayCount = compiledShapedQuery(feedDayCountQuery, feedShapeKey);

/** The number of rows of a user's whole feed the filter lets through, summed from the counts. */
async function feedTotal(db: Db, filter: FeedFilter): Promise<number> {
  const [row] = await feedCount(
    db,
    filter,
    filter.userId,
    ...viewerValues(filter.viewer),
    repoIdsValue(filter.onlyRepoIds),
  );
  // SUM over no rows is NULL.
  return Number(row?.n ?? 0);
}

/** The rows of the whole feed `shape` lets through, summed from the triggers' counts. */
function feedCountQuery(
  db: Db,
  shape: FeedShape,
  userId: number,
  viewerId: number,
  requestedId: number,
  repoIds: number[],
) {
  let query = db
    .selectFrom('action_feed_count')
    .select((eb) => eb.fn.sum<number>('action_feed_count.total').as('n'))
    .where('action_feed_count.user_id', '=', userId);
  if (shape.onlyPerformedBy) query = query.where('action_feed_count.act_user_id', '=', userId);
  if (shape.onlyRepoIds) query = query.where('action_feed_count.repo_id', 'in', repoIds);
  if (!shape.includePrivate) query = query.where('action_feed_count.is_private', '=', 0);
  if (shape.viewer) {
    query = query.where(
      viewerCondition('action_feed_count', viewerWith(shape.viewer, viewerId, requestedId)),
    );
  }
  return query;
}

const feedCount = compiledShapedQuery(feedCountQuery, feedShapeKey);
