// The second benchmark baseline: a bare node:http server that runs, per request, the SQL statements a
// forge data route needs through better-sqlite3 directly (prepared once, at start-up) and
// JSON.stringify-s the rows. The gap between it and forge is forge's own cost (routing, auth, services,
// the query builder, conversion, serialization).
// argv: port, database file, kind, ...kind arguments.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import Database from 'better-sqlite3';

const [port, file, kind, ...args] = process.argv.slice(2);
// Opened as forge's store opens it (src/store/database.ts): read-write, the same pragmas. A read-only
// connection costs every statement an extra stat() of the journal that forge's does not make.
const db = new Database(file);
db.pragma('journal_mode = WAL');
db.pragma('busy_timeout = 10000');
db.pragma('synchronous = NORMAL');
const YEAR = 365 * 24 * 3600;

const columnsOf = (table) => db.pragma(`table_info(${table})`).map(({ name }) => name);
/** `alias.column AS prefixcolumn` for every column of `table`, as forge's joins select them. */
const prefixed = (table, alias, prefix) =>
  columnsOf(table)
    .map((name) => `${alias}.${name} AS ${prefix}${name}`)
    .join(', ');
/** Reads `table`'s row back out of a joined row where its columns carry `prefix`. */
const unprefixer = (table, prefix) => {
  const names = columnsOf(table);
  return (row) => {
    const out = {};
    for (const name of names) out[name] = row[prefix + name];
    return out;
  };
};

const userById = db.prepare('SELECT * FROM user WHERE id = ?');
const userByName = db.prepare('SELECT * FROM user WHERE lower_name = ?');
// forge's repository lookup (src/store/repositories.ts): owner and repository in one statement.
const repoByNames = db.prepare(
  `SELECT ${prefixed('repository', 'repository', 'repo_')}, ${prefixed('user', 'owner', 'owner_')}
   FROM repository JOIN user AS owner ON owner.id = repository.owner_id
   WHERE owner.lower_name = ? AND repository.lower_name = ?`,
);
/** forge's viewer condition on activity rows and counts, for an anonymous reader. */
const anonymousMaySee = (table) =>
  `EXISTS (SELECT 1 FROM user AS actor WHERE actor.id = ${table}.act_user_id
      AND actor.keep_activity_private = 0 AND actor.visibility = 0)
    AND (${table}.repo_id = 0 OR EXISTS (SELECT 1 FROM repository
      WHERE repository.id = ${table}.repo_id AND repository.is_private = 0))`;

const handlers = {
  // forge's statement for a token and the user in the path (src/store/tokens.ts): the token with its
  // owner and the named user, one row.
  user() {
    const tokenOwnerAndUser = db.prepare(
      `SELECT user.*, access_token.id AS token_id, access_token.token_hash AS token_hash,
         access_token.token_salt AS token_salt, access_token.scope AS token_scope,
         access_token.updated_unix AS token_updated_unix, ${prefixed('user', 'named', 'named_')}
       FROM access_token JOIN user ON user.id = access_token.uid
       LEFT JOIN user AS named ON named.lower_name = ?
       WHERE access_token.token_last_eight = ?`,
    );
    const namedUser = unprefixer('user', 'named_');
    return (req) => {
      const header = req.headers.authorization;
      const token = header?.startsWith('token ') ? header.slice(6) : '';
      const row = tokenOwnerAndUser.get(args[0], token.slice(-8));
      if (!row) return undefined;
      const actual = createHash('sha256').update(row.token_salt).update(token).digest();
      if (!timingSafeEqual(actual, Buffer.from(row.token_hash, 'hex'))) return undefined;
      return namedUser(row);
    };
  },
  // What forge needs for an anonymous search of a keyword of 3 to 12 characters: the suffix index
  // (migration 011) narrows the candidates, the LIKE conditions (login, full name, public e-mail)
  // decide; the count runs only when the page is full, as a shorter page already tells the total.
  search() {
    const where = `"type" + 0 = 0 AND visibility = 0
         AND (lower_name LIKE ? ESCAPE '\\' OR lower(full_name) LIKE ? ESCAPE '\\'
              OR (lower(email) LIKE ? ESCAPE '\\' AND keep_email_private = 0))
         AND id IN (SELECT user_id FROM user_search_suffix WHERE suffix >= ? AND suffix < ?)`;
    const limit = 30; // forge's default page size, written into the SQL as forge does
    const rows = db.prepare(
      `SELECT * FROM user WHERE ${where} ORDER BY lower_name, id LIMIT ${limit} OFFSET ?`,
    );
    const count = db.prepare(`SELECT count(*) AS n FROM user WHERE ${where}`);
    const pattern = `%${args[0]}%`;
    // The suffixes that begin with the keyword: [keyword, keyword with its last character incremented).
    const from = args[0];
    const to = from.slice(0, -1) + String.fromCodePoint(from.codePointAt(from.length - 1) + 1);
    return () => {
      const data = rows.all(pattern, pattern, pattern, from, to, 0);
      const total = data.length < limit ? data.length : count.get(pattern, pattern, pattern, from, to).n;
      return { ok: true, data, total };
    };
  },
  // What forge needs for an anonymous release list (limit > 1) or the latest release (limit = 1): the
  // owner and repository by name, one page with its total (X-Total-Count, Link), its attachments and
  // the publishers other than the owner (or the newest published non-prerelease with its publisher and
  // attachments).
  releases() {
    const limit = Number(args[2]);
    const latest = limit === 1;
    // forge's page on SQLite (src/store/releases.ts): every row carries the total the release_count
    // triggers keep (migration 010); the attachments of the page are a second statement.
    const page = db.prepare(
      `SELECT *, (SELECT coalesce(sum(total), 0) FROM release_count WHERE repo_id = ? AND is_draft = 0)
         AS list_total
       FROM release WHERE repo_id = ? AND is_tag = 0 AND is_draft = 0
       ORDER BY created_unix DESC, id DESC LIMIT ${limit} OFFSET ?`,
    );
    const attachments = new Map();
    const attachmentsOf = (n) => {
      if (!attachments.has(n)) {
        attachments.set(
          n,
          db.prepare(`SELECT * FROM attachment WHERE release_id IN (${inList(n)}) ORDER BY release_id, id`),
        );
      }
      return attachments.get(n);
    };
    const publishers = new Map();
    const inList = (n) => Array(n).fill('?').join(',');
    const usersByIds = (n) => {
      if (!publishers.has(n)) publishers.set(n, db.prepare(`SELECT * FROM user WHERE id IN (${inList(n)})`));
      return publishers.get(n);
    };
    // forge's latest release (src/store/releases.ts): release, publisher and attachments in one statement.
    const latestWithDetails = db.prepare(
      `SELECT ${prefixed('release', 'latest', 'release_')}, ${prefixed('user', 'publisher', 'publisher_')},
         ${prefixed('attachment', 'asset', 'asset_')}
       FROM (SELECT * FROM release WHERE repo_id = ? AND is_tag = 0 AND is_draft = 0 AND is_prerelease = 0
             ORDER BY created_unix DESC, id DESC LIMIT 1) AS latest
       LEFT JOIN user AS publisher ON publisher.id = latest.publisher_id
       LEFT JOIN attachment AS asset ON asset.release_id = latest.id
       ORDER BY asset.id`,
    );
    const [repoOf, releaseOf, publisherOf, assetOf] = [
      unprefixer('repository', 'repo_'),
      unprefixer('release', 'release_'),
      unprefixer('user', 'publisher_'),
      unprefixer('attachment', 'asset_'),
    ];
    const ownerOf = unprefixer('user', 'owner_');
    return () => {
      const found = repoByNames.get(args[0], args[1]);
      const repo = repoOf(found);
      if (latest) {
        const found = latestWithDetails.all(repo.id);
        return {
          ...releaseOf(found[0]),
          author: publisherOf(found[0]),
          assets: found.filter((r) => r.asset_id !== null).map(assetOf),
        };
      }
      const rows = page.all(repo.id, repo.id, 0);
      const total = rows.length ? rows[0].list_total : 0;
      const assets = rows.length ? attachmentsOf(rows.length).all(rows.map((r) => r.id)) : [];
      // As forge: the owner's row (read with the repository) is not read again as a publisher.
      const owner = ownerOf(found);
      const authors = new Map([[owner.id, owner]]);
      const publisherIds = [...new Set(rows.map((r) => r.publisher_id))].filter((id) => !authors.has(id));
      if (publisherIds.length) {
        for (const u of usersByIds(publisherIds.length).all(publisherIds)) authors.set(u.id, u);
      }
      const answer = rows.map((r) => ({
        ...r,
        author: authors.get(r.publisher_id),
        assets: assets.filter((a) => a.release_id === r.id),
      }));
      return { total, answer };
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
  // forge's feed statement (src/store/actions.ts): the page, each row carrying the total (from the
  // counts); the actors are the user whose feed it is, read already, as forge reads them.
  feeds() {
    const page = db.prepare(
      `SELECT action.*, (SELECT sum(total) FROM action_feed_count WHERE user_id = ? AND is_private = 0
           AND ${anonymousMaySee('action_feed_count')}) AS page_total
       FROM action WHERE user_id = ? AND is_deleted = 0 AND is_private = 0 AND ${anonymousMaySee('action')}
       ORDER BY created_unix DESC, id DESC LIMIT ?`,
    );
    return () => {
      const user = userByName.get(args[0]);
      const joined = page.all(user.id, user.id, Number(args[1]));
      const total = joined[0]?.page_total ?? 0;
      const actors = new Map([[user.id, user]]);
      const rows = joined.map(({ page_total: _, ...r }) => {
        let actor = actors.get(r.act_user_id);
        if (!actor) {
          actor = userById.get(r.act_user_id);
          actors.set(r.act_user_id, actor);
        }
        return { ...r, act_user: actor };
      });
      return { total, rows };
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
