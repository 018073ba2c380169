import { heatmapCache } from '../cache/heatmap-cache.js';
import { heatmapJson } from '../convert/heatmap.js';
import { listFeed } from '../store/action-feed.js';
import {
  HEATMAP_BUCKET_SECONDS,
  heatmapHeadCount,
  heatmapWholeBuckets,
  heatmapWindow,
} from '../store/action-heatmap.js';
import { type ActionViewer, activityGenerations } from '../store/actions.js';
import { type ActionRow, type UserRow, UserType } from '../store/schema.js';
import { nowUnix, type ServiceContext } from './context.js';
import { type RepositoryView, repositoryViewsById } from './repo-views.js';
import type { TokenRepositories } from './token-repositories.js';
import { usersForRows } from './users.js';

const YEAR_SECONDS = 365 * 24 * 60 * 60;

function selfOrAdmin(target: UserRow, viewer: UserRow | null): boolean {
  return viewer !== null && (viewer.is_admin === 1 || viewer.id === target.id);
}

function viewerFilter(target: UserRow, viewer: UserRow | null): ActionViewer | null {
  if (viewer?.is_admin) return null;
  return {
    viewerId: viewer?.id ?? null,
    requestedIsOrg: target.type === UserType.Organization,
    requestedId: target.id,
    restricted: viewer?.is_restricted === 1,
  };
}

const EMPTY_HEATMAP = Buffer.from('[]');

/** What limits the reader's credential: its repositories, and whether it reaches public things only. */
export interface ActivityReader {
  user: UserRow | null;
  publicOnly: boolean;
  repositories: TokenRepositories;
}

/** A repository-scoped token sees (and counts) only its repositories' activity, as in its listings. */
function onlyRepoIdsOf(repositories: TokenRepositories): number[] | undefined {
  return repositories === null ? undefined : [...repositories].sort((a, b) => a - b);
}

/**
 * Whose view of the activity the reader gets: a public-only token reads it as an anonymous reader
 * would (public actors in public repositories), whoever holds it.
 */
function viewerOf(reader: ActivityReader): UserRow | null {
  return reader.publicOnly ? null : reader.user;
}

/**
 * Gitea's `GetUserHeatmapDataByUser`: the user's own actions of the last 365 days in 15-minute UTC
 * buckets (an organization counts every row of its feed); empty when activity is private to the viewer.
 * Answers the JSON text (`HeatmapSchema`). The buckets wholly inside the window come from the heatmap
 * cache while the activity generations and the window's first whole bucket are those it was built
 * under (see cache/heatmap-cache.ts); the bucket the window starts inside is counted on every request.
 * A repository-scoped token counts only its repositories' rows, a public-only one only public activity.
 */
export async function userHeatmapJson(
  ctx: ServiceContext,
  target: UserRow,
  reader: ActivityReader,
  now = nowUnix(),
): Promise<Buffer> {
  const viewer = viewerOf(reader);
  if (target.keep_activity_private && !selfOrAdmin(target, viewer)) return EMPTY_HEATMAP;
  const filter = {
    userId: target.id,
    performedByUser: target.type !== UserType.Organization,
    since: now - YEAR_SECONDS,
    viewer: viewerFilter(target, viewer),
    onlyRepoIds: onlyRepoIdsOf(reader.repositories),
  };
  const window = heatmapWindow(filter.since);
  const cache = heatmapCache(ctx.db, ctx.config);
  // Everything the viewer conditions depend on besides the generations' tables: who reads, as what.
  const key = `${
    filter.viewer
      ? `${target.id}:${target.type}:${filter.viewer.viewerId ?? ''}:${filter.viewer.restricted ? 'r' : ''}`
      : `${target.id}:${target.type}:all`
  }:${filter.onlyRepoIds?.join(',') ?? '*'}`;
  // Read before the buckets: a write committed in between shows as a newer generation next time.
  const tag = `${await activityGenerations(ctx.db, target.id)}:${window.whole}`;
  let body = cache.get(key, tag);
  if (!body) {
    body = Buffer.from(heatmapJson(await heatmapWholeBuckets(ctx.db, filter, window)));
    cache.set(key, tag, body);
  }
  const head = await heatmapHeadCount(ctx.db, filter, window);
  if (head === 0) return body;
  const first = heatmapJson([{ timestamp: window.whole - HEATMAP_BUCKET_SECONDS, contributions: head }]);
  return body.length === 2
    ? Buffer.from(first)
    : Buffer.concat([Buffer.from(`${first.slice(0, -1)},`), body.subarray(1)]);
}

/** Start and end (inclusive, unix seconds, UTC) of a `YYYY-MM-DD` day; undefined when it does not parse. */
export function dayRange(date: string | undefined): [number, number] | undefined {
  if (!date || !/^\d{4}-\d{2}-\d{2}$/.test(date)) return undefined;
  const start = Date.parse(`${date}T00:00:00Z`);
  if (Number.isNaN(start) || new Date(start).toISOString().slice(0, 10) !== date) return undefined;
  return [start / 1000, start / 1000 + 86399];
}

/**
 * Gitea's `ListUserActivityFeeds`: the user's received feed, newest first. Private activity is included
 * only for the user themself and site admins; `onlyPerformedBy` keeps the user's own acts. A
 * repository-scoped token sees and counts only its repositories' rows, a public-only one only public
 * activity (as an anonymous reader).
 */
export async function userFeed(
  ctx: ServiceContext,
  target: UserRow,
  reader: ActivityReader,
  options: {
    onlyPerformedBy: boolean;
    date?: string;
    page: { offset: number; limit: number };
  },
): Promise<{
  rows: ActionRow[];
  total: number;
  /** The actor of a row (Ghost when deleted). */
  actorOf: (id: number) => UserRow;
  /** The repositories the rows refer to, as the viewer sees them. */
  repos: Map<number, RepositoryView>;
}> {
  // Which rows: as the credential lets its holder see them; the rows' users and repositories are then
  // shown as to the holder.
  const viewer = viewerOf(reader);
  const privileged = selfOrAdmin(target, viewer);
  const { rows, total } = await listFeed(ctx.db, {
    userId: target.id,
    onlyPerformedBy: options.onlyPerformedBy,
    includePrivate: privileged,
    viewer: privileged ? null : viewerFilter(target, viewer),
    between: dayRange(options.date),
    onlyRepoIds: onlyRepoIdsOf(reader.repositories),
    offset: options.page.offset,
    limit: options.page.limit,
  });
  // The user whose feed it is and the viewer were read for this request: most rows are the user's own
  // acts, so most pages need no statement for their actors.
  const actorOf = await usersForRows(
    ctx,
    rows.map((row) => row.act_user_id),
    [target, reader.user],
  );
  const repos = await repositoryViewsById(
    ctx,
    rows.map((row) => row.repo_id),
    reader.user,
  );
  return { rows, total, actorOf, repos };
}
