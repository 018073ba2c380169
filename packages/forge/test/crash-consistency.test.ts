// kill -9 during release writes, tag creation and git pushes: after every restart the release records
// and the git tags agree (the start-up sync repairs what the crash left), and nothing the server
// acknowledged is lost. Runs on SQLite and, in the forge-postgres project, on PostgreSQL.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGit } from '../src/git/command.js';
import { listTags, repositoryPath } from '../src/git/repository.js';
import { type ForgeDatabase, openDatabase } from '../src/store/database.js';
import { type ForgeProcess, spawnForge } from './postgres/forge-process.js';
import { GIT_IDENTITY } from './repo-fixtures.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

const CYCLES = 3;
const WRITERS = 4;

interface Acked {
  tag: string;
  /** Published (created non-draft or published by an acknowledged PATCH). */
  published: boolean;
  deleted: boolean;
}

describe('crash consistency under kill -9', () => {
  let dataDir: string;
  let database: TestDatabase;
  let forge: ForgeProcess | undefined;
  let db: ForgeDatabase;
  let token = '';
  let gitDir: string;
  let clone: string;
  const releases = new Map<number, Acked>();
  const createdTags = new Set<string>();
  const pushedTags = new Set<string>();
  /** Acknowledged writes in the current cycle. */
  let acks = 0;

  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${forge!.url}/api/v1${path}`, {
      method,
      headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'forge-crash-'));
    database = await createTestDatabase(dataDir);
    forge = await spawnForge({ dataDir, databaseUrl: database.url });
    const password = /password: (\S+)/.exec(forge.printed.join('\n'))?.[1];
    const basic = `Basic ${Buffer.from(`forge-admin:${password}`).toString('base64')}`;
    const made = await fetch(`${forge.url}/api/v1/users/forge-admin/tokens`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'crash', scopes: ['all'] }),
    });
    token = ((await made.json()) as { sha1: string }).sha1;
    expect((await api('POST', '/user/repos', { name: 'crashy', auto_init: true })).status).toBe(201);
    gitDir = repositoryPath(join(dataDir, 'repositories'), 'forge-admin', 'crashy');
    clone = join(dataDir, 'clone');
    await runGit(['clone', '--quiet', `${forge.url}/forge-admin/crashy.git`, clone]);
    db = await openDatabase({ url: database.url });
  }, 60_000);

  afterAll(async () => {
    await forge?.stop();
    await db?.close();
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  /** One writer: creates, publishes and deletes releases and creates tags until its request fails. */
  async function releaseWriter(id: number, cycle: number): Promise<void> {
    for (let n = 0; ; n += 1) {
      const tag = `c${cycle}-w${id}-${n}`;
      const mine = [...releases.entries()].filter(([, r]) => r.tag.startsWith(`c${cycle}-w${id}-`));
      const draft = mine.find(([, r]) => !r.published && !r.deleted);
      const live = mine.find(([, r]) => !r.deleted);
      if (n % 5 === 3 && draft) {
        const res = await api('PATCH', `/repos/forge-admin/crashy/releases/${draft[0]}`, { draft: false });
        if (res.status === 200) {
          draft[1].published = true;
          acks += 1;
        }
      } else if (n % 7 === 6 && live) {
        const res = await api('DELETE', `/repos/forge-admin/crashy/releases/${live[0]}`);
        if (res.status === 204) {
          live[1].deleted = true;
          acks += 1;
        }
      } else if (n % 4 === 1) {
        const res = await api('POST', '/repos/forge-admin/crashy/tags', { tag_name: `t-${tag}` });
        if (res.status === 201) {
          createdTags.add(`t-${tag}`);
          acks += 1;
        }
      } else {
        const isDraft = n % 3 === 2;
        const res = await api('POST', '/repos/forge-admin/crashy/releases', {
          tag_name: tag,
          draft: isDraft,
        });
        if (res.status === 201) {
          const body = (await res.json()) as { id: number };
          releases.set(body.id, { tag, published: !isDraft, deleted: false });
          acks += 1;
        }
      }
    }
  }

  /** Pushes one new lightweight tag at a time until a push fails. */
  async function pusher(cycle: number): Promise<void> {
    const remote = new URL(`${forge!.url}/forge-admin/crashy.git`);
    remote.username = 'forge-admin';
    remote.password = token;
    for (let n = 0; ; n += 1) {
      const tag = `p${cycle}-${n}`;
      await runGit(['-C', clone, 'tag', tag], { env: GIT_IDENTITY });
      await runGit(['-C', clone, 'push', '--quiet', remote.href, `refs/tags/${tag}`]);
      pushedTags.add(tag);
      acks += 1;
    }
  }

  /** Every way records and tags can disagree, as readable lines (empty when consistent). */
  async function inconsistencies(): Promise<string[]> {
    const problems: string[] = [];
    const tags = new Map((await listTags(gitDir)).map((tag) => [tag.name, tag]));
    const rows = await db.db.selectFrom('release').selectAll().execute();
    const byLower = new Map(rows.map((row) => [row.lower_tag_name, row]));
    for (const name of tags.keys()) {
      if (!byLower.has(name.toLowerCase())) problems.push(`tag ${name} has no record`);
    }
    for (const row of rows) {
      const tag = tags.get(row.tag_name);
      if (row.is_tag === 1 && !tag) problems.push(`tag-only record ${row.tag_name} has no tag`);
      if (row.is_tag === 0 && row.is_draft === 0 && !tag) problems.push(`release ${row.tag_name} has no tag`);
      if (tag && row.sha1 !== tag.commitSha)
        problems.push(`record ${row.tag_name} is not at its tag's commit`);
    }
    for (const [id, acked] of releases) {
      const row = rows.find((r) => r.id === id);
      if (!row) problems.push(`acknowledged release ${acked.tag} (${id}) is lost`);
      else if (!acked.deleted && row.is_tag === 1)
        problems.push(`acknowledged release ${acked.tag} is tag-only`);
      else if (acked.published && !acked.deleted && row.is_draft === 1) {
        problems.push(`acknowledged published release ${acked.tag} is a draft`);
      }
    }
    for (const tag of [...createdTags, ...pushedTags]) {
      if (!tags.has(tag)) problems.push(`acknowledged tag ${tag} is lost`);
      if (!byLower.has(tag.toLowerCase())) problems.push(`acknowledged tag ${tag} has no record`);
    }
    return problems;
  }

  it(`${CYCLES} cycles of writes cut by SIGKILL leave zero inconsistencies after each restart`, async () => {
    for (let cycle = 0; cycle < CYCLES; cycle += 1) {
      const writers = [
        ...Array.from({ length: WRITERS }, (_, id) => releaseWriter(id, cycle)),
        pusher(cycle),
        // Each writer ends with the request the kill cut off.
      ].map((writer) => writer.catch(() => undefined));
      // Kill once the writers are well under way (however slow the machine), at a different point of
      // the write stream each cycle.
      acks = 0;
      for (let waited = 0; acks < 6 + cycle * 3 && waited < 30_000; waited += 20) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await forge!.kill();
      await Promise.all(writers);
      forge = await spawnForge({ dataDir, databaseUrl: database.url });
      expect(await inconsistencies()).toEqual([]);
    }
    // The writes really happened, and the crashes really hit them.
    expect(releases.size).toBeGreaterThan(CYCLES);
    expect(pushedTags.size + createdTags.size).toBeGreaterThan(0);
  }, 120_000);
});
