// The second benchmark baseline: a bare node:http server that runs, per request, the SQL statements a
// forge data route needs through better-sqlite3 directly (prepared once, at start-up) and
// JSON.stringify-s the rows. The gap between it and forge is forge's own cost (routing, auth, services,
// the query builder, conversion, serialization).
// argv: port, database file, kind, ...kind arguments.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import Database from 'better-sqlite3';

const [port, file, kind, ...args] = process.argv.slice(2);
const db = new Database(file, { readonly: true });
const YEAR = 365 * 24 * 3600;

function tokenUser(header) {
  const token = header?.startsWith('token ') ? header.slice(6) : '';
  const row = tokenByLastEight.get(token.slice(-8));
  if (!row) return undefined;
  const actual = createHash('sha256').update(row.token_salt).update(token).digest();
  if (!timingSafeEqual(actual, Buffer.from(row.token_hash, 'hex'))) return undefined;
  return userById.get(row.uid);
}
const tokenByLastEight = db.prepare('SELECT * FROM access_token WHERE token_last_eight = ?');
const userById = db.prepare('SELECT * FROM user WHERE id = ?');
const userByName = db.prepare('SELECT * FROM user WHERE lower_name = ?');
const repoByName = db.prepare('SELECT * FROM repository WHERE owner_id = ? AND lower_name = ?');
/** forge's viewer condition on activity rows and counts, for an anonymous reader. */
const anonymousMaySee = (table) =>
  `EXISTS (SELECT 1 FROM user AS actor WHERE actor.id = ${table}.act_user_id
      AND actor.keep_activity_private = 0 AND actor.visibility = 0)
    AND (${table}.repo_id = 0 OR EXISTS (SELECT 1 FROM repository
      WHERE repository.id = ${table}.repo_id AND repository.is_private = 0))`;

const handlers = {
  user() {
    return (req) => {
      tokenUser(req.headers.authorization);
      return userByName.get(args[0]);
    };
  },
  search() {
    const rows = db.prepare(
      `SELECT * FROM user WHERE type + 0 = 0 AND visibility = 0
         AND (lower_name LIKE ? ESCAPE '\\' OR lower(full_name) LIKE ? ESCAPE '\\')
         AND id IN (SELECT rowid FROM user_search WHERE user_search MATCH ?)
       ORDER BY lower_name, id LIMIT 10`,
    );
    const count = db.prepare(
      `SELECT count(*) AS n FROM user WHERE type + 0 = 0 AND visibility = 0
         AND (lower_name LIKE ? ESCAPE '\\' OR lower(full_name) LIKE ? ESCAPE '\\')
         AND id IN (SELECT rowid FROM user_search WHERE user_search MATCH ?)`,
    );
    const pattern = `%${args[0]}%`;
    const phrase = `"${args[0]}"`;
    return () => ({
      ok: true,
      data: rows.all(pattern, pattern, phrase),
      total: count.get(pattern, pattern, phrase).n,
    });
  },
  releases() {
    const limit = Number(args[2]);
    const page = db.prepare(
      `SELECT * FROM release WHERE repo_id = ? AND is_tag = 0 AND is_draft = 0
       ORDER BY created_unix DESC, id DESC LIMIT ?`,
    );
    const count = db.prepare(
      'SELECT count(*) AS n FROM release WHERE repo_id = ? AND is_tag = 0 AND is_draft = 0',
    );
    return () => {
      const owner = userByName.get(args[0]);
      const repo = repoByName.get(owner.id, args[1]);
      const rows = page.all(repo.id, limit);
      const total = count.get(repo.id).n;
      return limit === 1 ? { ...rows[0], author: owner, total } : rows.map((r) => ({ ...r, author: owner }));
    };
  },
  // The activity routes run forge's statements (src/store/actions.ts) for an anonymous reader.
  heatmap() {
    const buckets = db.prepare(
      `SELECT bucket AS timestamp, sum(contributions) AS contributions FROM action_heatmap
       WHERE user_id = ? AND bucket >= ? AND act_user_id = ? AND ${anonymousMaySee('action_heatmap')}
       GROUP BY bucket ORDER BY bucket`,
    );
    const partial = db.prepare(
      `SELECT count(*) AS n FROM action WHERE user_id = ? AND created_unix >= ? AND created_unix < ?
         AND act_user_id = ? AND ${anonymousMaySee('action')}`,
    );
    return () => {
      const user = userByName.get(args[0]);
      const first = Math.floor(Date.now() / 1000) - YEAR + 1;
      const whole = Math.ceil(first / 900) * 900;
      const rows = buckets.all(user.id, whole, user.id);
      if (first === whole) return rows;
      const head = partial.get(user.id, first, whole, user.id).n;
      return head > 0 ? [{ timestamp: whole - 900, contributions: head }, ...rows] : rows;
    };
  },
  feeds() {
    const page = db.prepare(
      `SELECT * FROM action WHERE user_id = ? AND is_deleted = 0 AND is_private = 0 AND ${anonymousMaySee('action')}
       ORDER BY created_unix DESC, id DESC LIMIT ?`,
    );
    const count = db.prepare(
      `SELECT sum(total) AS n FROM action_feed_count WHERE user_id = ? AND is_private = 0
         AND ${anonymousMaySee('action_feed_count')}`,
    );
    return () => {
      const user = userByName.get(args[0]);
      const rows = page.all(user.id, Number(args[1]));
      const total = count.get(user.id).n ?? 0;
      return { total, rows: rows.map((r) => ({ ...r, act_user: userById.get(r.act_user_id) })) };
    };
  },
};

const handle = handlers[kind]();
createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const body = JSON.stringify(handle(req));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
}).listen(Number(port), '127.0.0.1', () => process.send?.('ready'));
