// scratch: PG plan check (not committed)
import pg from 'pg';
import { openDatabase } from './src/store/database.ts';

const server = 'postgres://postgres@127.0.0.1:5432/postgres';
const name = 'fa_activity_explain';
const admin = new pg.Client({ connectionString: server });
await admin.connect();
if (process.argv[2] === 'seed') {
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
}
await admin.end();
const url = `postgres://postgres@127.0.0.1:5432/${name}`;
const forge = await openDatabase({ url });
await forge.close();
const c = new pg.Client({ connectionString: url });
await c.connect();
if (process.argv[2] === 'seed') {
  const t = Date.now();
  await c.query(
    `INSERT INTO "user" (lower_name, name, email, created_unix, updated_unix) SELECT 'u' || i, 'u' || i, 'u' || i || '@x', 0, 0 FROM generate_series(0, 1000) i`,
  );
  const now = Math.floor(Date.now() / 1000);
  // user 1 = bench: every 50th row; others spread
  await c.query('ALTER TABLE action DISABLE TRIGGER action_counts');
  await c.query(`INSERT INTO action (user_id, op_type, act_user_id, repo_id, comment_id, ref_name, is_private, is_deleted, content, created_unix)
    SELECT CASE WHEN i % 50 = 0 THEN 1 ELSE 2 + (i % 1000) END, 5, CASE WHEN i % 50 = 0 THEN 1 ELSE 2 + (i % 1000) END, 0, 0, 'refs/heads/main', 0, 0, '', ${now} - floor((i::float8 / 1000000) * 360 * 86400)::bigint
    FROM generate_series(0, 999999) i`);
  await c.query('ALTER TABLE action ENABLE TRIGGER action_counts');
  const b = Date.now();
  await c.query(`INSERT INTO action_heatmap (user_id, act_user_id, bucket, repo_id, contributions)
        SELECT user_id, act_user_id, (created_unix / 900) * 900, repo_id, count(*) FROM action
        GROUP BY user_id, act_user_id, (created_unix / 900) * 900, repo_id`);
  await c.query(`INSERT INTO action_feed_count (user_id, act_user_id, repo_id, is_private, total)
        SELECT user_id, act_user_id, repo_id, is_private, count(*) FROM action WHERE is_deleted = 0
        GROUP BY user_id, act_user_id, repo_id, is_private`);
  console.log('backfill (as migration 009) ms', Date.now() - b);
  const t2 = Date.now();
  await c.query(`INSERT INTO action (user_id, op_type, act_user_id, created_unix) SELECT 1, 5, 1, ${now} - i FROM generate_series(1, 2000) i`);
  console.log('2000 rows through the trigger ms', Date.now() - t2);
  await c.query('ANALYZE');
  console.log('seeded in', Date.now() - t, 'ms');
}
const first = Math.floor(Date.now() / 1000) - 365 * 86400 + 1,
  whole = Math.ceil(first / 900) * 900;
const see = (t: string) =>
  `EXISTS (SELECT 1 FROM "user" AS actor WHERE actor.id = ${t}.act_user_id AND actor.keep_activity_private = 0 AND actor.visibility = 0) AND (${t}.repo_id = 0 OR EXISTS (SELECT 1 FROM repository WHERE repository.id = ${t}.repo_id AND repository.is_private = 0))`;
const qs: Record<string, [string, unknown[]]> = {
  heatmap: [
    `SELECT bucket AS timestamp, sum(contributions) AS contributions FROM action_heatmap WHERE user_id = $1 AND bucket >= $2 AND act_user_id = $3 AND ${see('action_heatmap')} GROUP BY bucket ORDER BY bucket`,
    [1, whole, 1],
  ],
  partial: [
    `SELECT count(*) AS n FROM action WHERE user_id = $1 AND created_unix >= $2 AND created_unix < $3 AND act_user_id = $4 AND ${see('action')}`,
    [1, first, whole, 1],
  ],
  page: [
    `SELECT * FROM action WHERE user_id = $1 AND is_deleted = 0 AND is_private = 0 AND ${see('action')} ORDER BY created_unix DESC, id DESC LIMIT 30`,
    [1],
  ],
  count: [
    `SELECT sum(total) AS n FROM action_feed_count WHERE user_id = $1 AND is_private = 0 AND ${see('action_feed_count')}`,
    [1],
  ],
  oldHeatmap: [
    `SELECT (created_unix / 900) * 900 AS timestamp, count(*) AS contributions FROM action WHERE user_id = $1 AND created_unix > $2 AND act_user_id = $3 AND act_user_id IN (SELECT id FROM "user" WHERE keep_activity_private = 0 AND visibility = 0) AND (repo_id = 0 OR repo_id IN (SELECT id FROM repository WHERE is_private = 0)) GROUP BY 1 ORDER BY 1`,
    [1, first - 1, 1],
  ],
  oldCount: [
    `SELECT count(*) AS n FROM action WHERE user_id = $1 AND is_deleted = 0 AND is_private = 0 AND act_user_id IN (SELECT id FROM "user" WHERE keep_activity_private = 0 AND visibility = 0) AND (repo_id = 0 OR repo_id IN (SELECT id FROM repository WHERE is_private = 0))`,
    [1],
  ],
};
for (const [k, [s, a]] of Object.entries(qs)) {
  const r = await c.query(`EXPLAIN (ANALYZE, BUFFERS OFF) ${s}`, a);
  console.log('--', k);
  for (const row of r.rows) console.log('   ', row['QUERY PLAN']);
}
await c.end();
