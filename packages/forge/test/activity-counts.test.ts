// The heatmap and the feed total read counts that triggers keep beside the action table (migration 009).
// These tests hold them to the rows: visibility changes show at once, and on varied data (inserts,
// updates, deletes) the answers equal those of counting the action rows, the query forge ran before.
import fc from 'fast-check';
import { type Kysely, type SqlBool, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listFeed } from '../src/store/action-feed.js';
import { heatmapBuckets } from '../src/store/action-heatmap.js';
import { type ActionViewer, insertActions } from '../src/store/actions.js';
import type { Database } from '../src/store/schema.js';
import { startTestForge, type TestForge, type TestUser } from './harness.js';
import { createRepo, type TestRepo } from './repo-fixtures.js';
import { testingPostgres } from './test-database.js';

let forge: TestForge;
beforeAll(async () => {
  forge = await startTestForge();
}, 60_000);
afterAll(() => forge?.close());

type Contribution = { timestamp: number; contributions: number };

describe(`activity counts (${testingPostgres() ? 'PostgreSQL' : 'SQLite'})`, () => {
  describe('a repository turning private', () => {
    let author: TestUser;
    let authorToken: string;
    let repo: TestRepo;
    const heatmap = (auth: { basic?: TestUser } = {}) =>
      forge.request<Contribution[]>('GET', `/users/${author.username}/heatmap`, auth);
    const feed = (auth: { basic?: TestUser } = {}) =>
      forge.request<unknown[]>('GET', `/users/${author.username}/activities/feeds`, auth);
    const sum = (buckets: Contribution[]) => buckets.reduce((n, b) => n + b.contributions, 0);

    beforeAll(async () => {
      author = await forge.createUser();
      authorToken = await forge.createToken(author, ['write:repository', 'write:user']);
      repo = await createRepo(forge, authorToken);
      const release = await forge.request('POST', `${repo.path}/releases`, {
        token: authorToken,
        body: { tag_name: 'v1', name: 'one' },
      });
      expect(release.status).toBe(201);
    });

    it('takes its contributions out of the anonymous heatmap and feed at once; the owner keeps them', async () => {
      const before = await heatmap();
      expect(before.status).toBe(200);
      // create_repo and publish_release (and the tag push, if recorded) of the public repository.
      const contributions = sum(before.body);
      expect(contributions).toBeGreaterThanOrEqual(2);
      expect(await heatmap({ basic: author })).toMatchObject({ body: before.body });
      const publicFeed = await feed();
      expect(publicFeed.headers.get('x-total-count')).toBe(String(contributions));
      expect(publicFeed.body).toHaveLength(contributions);

      const hide = await forge.request('PATCH', repo.path, { token: authorToken, body: { private: true } });
      expect(hide.status).toBe(200);
      expect(hide.body.private).toBe(true);

      const anonymous = await heatmap();
      expect(anonymous.status).toBe(200);
      expect(anonymous.body).toEqual([]);
      const hiddenFeed = await feed();
      expect(hiddenFeed.body).toEqual([]);
      expect(hiddenFeed.headers.get('x-total-count')).toBe('0');
      const own = await heatmap({ basic: author });
      expect(own.body).toEqual(before.body);
      expect((await feed({ basic: author })).headers.get('x-total-count')).toBe(String(contributions));

      const show = await forge.request('PATCH', repo.path, { token: authorToken, body: { private: false } });
      expect(show.status).toBe(200);
      expect((await heatmap()).body).toEqual(before.body);
      expect((await feed()).headers.get('x-total-count')).toBe(String(contributions));
    });

    it("deleting the repository takes its rows out of everyone's counts", async () => {
      const gone = await forge.request('DELETE', repo.path, { token: authorToken });
      expect(gone.status).toBe(204);
      expect((await heatmap({ basic: author })).body).toEqual([]);
      const ownFeed = await feed({ basic: author });
      expect(ownFeed.body).toEqual([]);
      expect(ownFeed.headers.get('x-total-count')).toBe('0');
    });
  });

  describe('equal to counting the action rows', () => {
    /** Users whose feeds the generated rows go to (the organization last). */
    const targets: Array<{ id: number; isOrg: boolean }> = [];
    /** Viewers: null is a site admin (no restrictions); id null is anonymous. */
    const viewers: Array<{ id: number | null; restricted: boolean } | null> = [
      null,
      { id: null, restricted: false },
    ];
    const repoIds: number[] = [0];

    beforeAll(async () => {
      const owner = await forge.createUser();
      const limited = await forge.createUser({ visibility: 'limited' });
      const quiet = await forge.createUser();
      const restricted = await forge.createUser({ restricted: true });
      const ownerToken = await forge.createToken(owner, [
        'write:repository',
        'write:organization',
        'write:user',
      ]);
      await forge.ctx.db
        .updateTable('user')
        .set({ keep_activity_private: 1 })
        .where('id', '=', quiet.id)
        .execute();
      const org = await forge.createOrg(ownerToken, {});
      const team = await forge.createTeam(ownerToken, org.name, { permission: 'read', units: ['repo.code'] });
      await forge.addTeamMember(ownerToken, team.id, restricted.username);
      const publicRepo = await createRepo(forge, ownerToken);
      const privateRepo = await createRepo(forge, ownerToken, { private: true });
      const orgRepo = await createRepo(forge, ownerToken, { org: org.name, private: true });
      const collab = await forge.request('PUT', `${privateRepo.path}/collaborators/${limited.username}`, {
        token: ownerToken,
        body: { permission: 'read' },
      });
      expect(collab.status).toBe(204);
      const teamRepo = await forge.request('PUT', `${orgRepo.path}/teams/${team.name}`, {
        token: ownerToken,
      });
      expect(teamRepo.status).toBe(204);
      for (const repo of [publicRepo, privateRepo, orgRepo]) {
        const row = await forge.ctx.db
          .selectFrom('repository')
          .select('repository.id')
          .innerJoin('user', 'user.id', 'repository.owner_id')
          .where('user.lower_name', '=', repo.owner.toLowerCase())
          .where('repository.lower_name', '=', repo.name.toLowerCase())
          .executeTakeFirstOrThrow();
        repoIds.push(row.id);
      }
      // A repository id no row of the repository table has (a deleted repository's leftovers).
      repoIds.push(999_999_999);
      for (const user of [owner, limited, quiet, restricted]) targets.push({ id: user.id, isOrg: false });
      targets.push({ id: org.id, isOrg: true });
      viewers.push(
        { id: owner.id, restricted: false },
        { id: limited.id, restricted: false },
        { id: quiet.id, restricted: false },
        { id: restricted.id, restricted: true },
      );
      // The creation of the repositories recorded actions: start from none.
      await forge.ctx.db.deleteFrom('action').execute();
    });

    const BASE = 1_700_000_000;
    const actionRow = fc.record({
      target: fc.nat({ max: 4 }),
      actor: fc.nat({ max: 4 }),
      repo: fc.nat({ max: 4 }),
      // A few hours around BASE: many rows share 15-minute buckets.
      offset: fc.integer({ min: -3600, max: 4 * 3600 }),
      isPrivate: fc.constantFrom(0 as const, 1 as const),
      isDeleted: fc.constantFrom(0 as const, 0 as const, 1 as const),
    });
    const change = fc.record({
      pick: fc.nat(),
      kind: fc.constantFrom('delete', 'undelete', 'move', 'hide'),
      offset: fc.integer({ min: -3600, max: 4 * 3600 }),
    });

    it('heatmap and feed (page and total) for every viewer, after inserts, updates and deletes', async () => {
      const db = forge.ctx.db;
      await fc.assert(
        fc.asyncProperty(
          fc.array(actionRow, { maxLength: 40 }),
          fc.array(change, { maxLength: 10 }),
          fc.integer({ min: -3600, max: 4 * 3600 }),
          async (rows, changes, sinceOffset) => {
            try {
              await insertActions(
                db,
                rows.map((r) => ({
                  user_id: targets[r.target]?.id ?? 0,
                  act_user_id: targets[r.actor]?.id ?? 0,
                  repo_id: repoIds[r.repo] ?? 0,
                  op_type: 5,
                  is_private: r.isPrivate,
                  is_deleted: r.isDeleted,
                  created_unix: BASE + r.offset,
                })),
              );
              await expectSameAnswers(db, BASE + sinceOffset);
              const ids = (await db.selectFrom('action').select('id').orderBy('id').execute()).map(
                (r) => r.id,
              );
              for (const c of changes) {
                const id = ids[c.pick % Math.max(ids.length, 1)];
                if (id === undefined) break;
                const target = db.updateTable('action').where('id', '=', id);
                if (c.kind === 'delete') await db.deleteFrom('action').where('id', '=', id).execute();
                else if (c.kind === 'undelete') await target.set({ is_deleted: 0 }).execute();
                else if (c.kind === 'move') await target.set({ created_unix: BASE + c.offset }).execute();
                else await target.set({ is_private: 1, is_deleted: 1 }).execute();
              }
              await expectSameAnswers(db, BASE + sinceOffset);
            } finally {
              await db.deleteFrom('action').execute();
            }
            expect(await db.selectFrom('action_heatmap').selectAll().execute()).toEqual([]);
            expect(await db.selectFrom('action_feed_count').selectAll().execute()).toEqual([]);
          },
        ),
        { numRuns: 15 },
      );
    }, 180_000);

    async function expectSameAnswers(db: Kysely<Database>, since: number) {
      for (const target of targets) {
        for (const v of viewers) {
          const viewer: ActionViewer | null = v && {
            viewerId: v.id,
            requestedIsOrg: target.isOrg,
            requestedId: target.id,
            restricted: v.restricted,
          };
          const filter = { userId: target.id, performedByUser: !target.isOrg, since, viewer };
          expect(await heatmapBuckets(db, filter)).toEqual(await referenceHeatmap(db, filter));
          for (const onlyPerformedBy of [false, true]) {
            // As the service asks: private rows for the unrestricted (admin, self) reader only.
            const feed = {
              userId: target.id,
              onlyPerformedBy,
              includePrivate: !viewer,
              viewer,
              offset: 0,
              limit: 1000,
            };
            const got = await listFeed(db, feed);
            const want = await referenceFeed(db, feed);
            expect({ ids: got.rows.map((r) => r.id), total: got.total }).toEqual(want);
          }
        }
      }
    }
  });
});

// The queries forge ran before the counts (the action rows themselves, list subqueries), as references.

function referenceViewerCondition(viewer: ActionViewer) {
  const id = viewer.viewerId;
  let actors: ReturnType<typeof sql<SqlBool>>;
  if (id === null) {
    actors = sql<SqlBool>`action.act_user_id IN (SELECT id FROM ${sql.table('user')} WHERE keep_activity_private = 0 AND visibility = 0)`;
  } else {
    const extra = viewer.requestedIsOrg
      ? sql`OR id = ${viewer.requestedId}`
      : sql`OR (type = 1 AND id IN (SELECT org_id FROM team_user WHERE uid = ${viewer.requestedId}))`;
    const visible = viewer.restricted ? sql`(0)` : sql`(0, 1)`;
    actors = sql<SqlBool>`action.act_user_id IN (SELECT id FROM ${sql.table('user')} WHERE (keep_activity_private = 0 AND visibility IN ${visible}) OR id = ${id} ${extra})`;
  }
  const publicRepos = viewer.restricted ? sql`0 = 1` : sql`is_private = 0`;
  const repos =
    id === null
      ? sql<SqlBool>`(action.repo_id = 0 OR action.repo_id IN (SELECT id FROM repository WHERE is_private = 0))`
      : sql<SqlBool>`(action.repo_id = 0 OR action.repo_id IN (
          SELECT id FROM repository WHERE ${publicRepos} OR owner_id = ${id}
          UNION SELECT repo_id FROM collaboration WHERE user_id = ${id}
          UNION SELECT team_repo.repo_id FROM team_repo JOIN team_user ON team_user.team_id = team_repo.team_id WHERE team_user.uid = ${id}
          UNION SELECT repository.id FROM repository JOIN team ON team.org_id = repository.owner_id AND team.includes_all_repositories = 1
            JOIN team_user ON team_user.team_id = team.id WHERE team_user.uid = ${id}))`;
  return sql<SqlBool>`(${actors} AND ${repos})`;
}

async function referenceHeatmap(
  db: Kysely<Database>,
  filter: { userId: number; performedByUser: boolean; since: number; viewer: ActionViewer | null },
) {
  const bucket = sql<number>`(action.created_unix / 900) * 900`;
  let query = db
    .selectFrom('action')
    .select([bucket.as('timestamp'), (eb) => eb.fn.countAll<number>().as('contributions')])
    .where('action.user_id', '=', filter.userId)
    .where('action.created_unix', '>', filter.since);
  if (filter.performedByUser) query = query.where('action.act_user_id', '=', filter.userId);
  if (filter.viewer) query = query.where(referenceViewerCondition(filter.viewer));
  const rows = await query.groupBy(bucket).orderBy(bucket).execute();
  return rows.map((r) => ({ timestamp: Number(r.timestamp), contributions: Number(r.contributions) }));
}

async function referenceFeed(
  db: Kysely<Database>,
  filter: { userId: number; onlyPerformedBy: boolean; includePrivate: boolean; viewer: ActionViewer | null },
) {
  let query = db
    .selectFrom('action')
    .where('action.user_id', '=', filter.userId)
    .where('action.is_deleted', '=', 0);
  if (filter.onlyPerformedBy) query = query.where('action.act_user_id', '=', filter.userId);
  if (!filter.includePrivate) query = query.where('action.is_private', '=', 0);
  if (filter.viewer) query = query.where(referenceViewerCondition(filter.viewer));
  const rows = await query
    .select('action.id')
    .orderBy('action.created_unix', 'desc')
    .orderBy('action.id', 'desc')
    .execute();
  return { ids: rows.map((r) => r.id), total: rows.length };
}
