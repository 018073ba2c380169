/**
 * The activity rows (`action`): recording them, and what every read of them shares: the viewer's
 * restrictions (Gitea's `activityQueryCondition`) and the generations that tell a cached answer still
 * holds. The heatmap is read in ./action-heatmap.ts, the feed in ./action-feed.ts.
 */

import { type Insertable, type Kysely, type SqlBool, sql } from 'kysely';
import { compiledQuery } from './compiled-query.js';
import type { ActionTable, Database } from './schema.js';

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
export type ActivityTable = 'action' | 'action_heatmap' | 'action_feed_count';

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
export function viewerCondition(table: ActivityTable, viewer: ActionViewer) {
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
export function viewerShapeKey(viewer: ActionViewer | null): string {
  if (!viewer) return 'all';
  if (viewer.viewerId === null) return 'anonymous';
  return `${viewer.requestedIsOrg ? 'org' : 'user'}${viewer.restricted ? ':restricted' : ''}`;
}

/** `viewer`'s shape with the call's stand-ins for its ids (see compiledShapedQuery). */
export function viewerWith(viewer: ActionViewer, viewerId: number, requestedId: number): ActionViewer {
  return { ...viewer, viewerId: viewer.viewerId === null ? null : viewerId, requestedId };
}

/** The viewer's ids as statement values (unused ones as 0). */
export function viewerValues(viewer: ActionViewer | null): [number, number] {
  return [viewer?.viewerId ?? 0, viewer?.requestedId ?? 0];
}

/**
 * A repository-scoped token's repositories as one statement value: rows of other repositories (and rows
 * of none) are left out of the rows and of the counts alike. An empty list stands in as [-1] (no such
 * id), so `IN` always has an element; the list's length is part of the compiled statement's key.
 */
export function repoIdsValue(onlyRepoIds: readonly number[] | undefined): number[] {
  return onlyRepoIds?.length ? [...onlyRepoIds] : [-1];
}

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
