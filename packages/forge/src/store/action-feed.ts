/**
 * A user's activity feed (Gitea's `GetFeeds`): one page of action rows the viewer may see, optionally of
 * one day, with the total summed from the counts the triggers keep (`action_feed_count`, migration 009).
 */

import type { Kysely } from 'kysely';
import {
  type ActionViewer,
  repoIdsValue,
  viewerCondition,
  viewerShapeKey,
  viewerValues,
  viewerWith,
} from './actions.js';
import { compiledShapedQuery } from './compiled-query.js';
import type { ActionRow, Database } from './schema.js';

type Db = Kysely<Database>;

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
