/**
 * Gitea's contribution heatmap from the activity tables: rows per 15-minute bucket of one user's acts, as
 * the viewer may see them; whole buckets come from the counts the triggers keep (`action_heatmap`,
 * migration 009), only the newest, partial bucket is counted from the action rows.
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
import type { Database } from './schema.js';

type Db = Kysely<Database>;

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
