/**
 * A contents-API write whose announcement (activity row, webhook events) fails after the branch moved:
 * the answer says what happened to the branch (the commit is made), and the ref journal announces the
 * commit once the failure is gone (webhooks/ref-journal.ts), with its activity and its push event once
 * each. The failure is injected with a database trigger refusing activity rows, or webhook outbox rows
 * (after the activity was prepared), on SQLite and, in the forge-postgres project, on PostgreSQL.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, startTestForge, type TestForge } from './harness.js';
import { type HookReceiver, startHookReceiver } from './hook-receiver.js';
import { createRepo, type TestRepo } from './repo-fixtures.js';

const SECRET = 'announce-failure';
const b64 = (text: string) => Buffer.from(text).toString('base64');

describe('a contents write whose announcement fails after the branch moved', () => {
  let forge: TestForge;
  let receiver: HookReceiver;
  let token: string;
  let owner: string;

  /** Makes every insert into `table` fail, as a database refusing writes would. */
  const refuse = async (table: string) => {
    const t = sql.table(table);
    if (forge.ctx.dialect === 'postgres') {
      await sql`CREATE FUNCTION refuse_insert() RETURNS trigger AS $$
        BEGIN RAISE EXCEPTION 'injected failure'; END $$ LANGUAGE plpgsql`.execute(forge.ctx.db);
      await sql`CREATE TRIGGER refuse_insert BEFORE INSERT ON ${t}
        FOR EACH ROW EXECUTE FUNCTION refuse_insert()`.execute(forge.ctx.db);
    } else {
      await sql`CREATE TRIGGER refuse_insert BEFORE INSERT ON ${t}
        BEGIN SELECT RAISE(ABORT, 'injected failure'); END`.execute(forge.ctx.db);
    }
  };
  const allow = async (table: string) => {
    if (forge.ctx.dialect === 'postgres') {
      await sql`DROP TRIGGER refuse_insert ON ${sql.table(table)}`.execute(forge.ctx.db);
      await sql`DROP FUNCTION refuse_insert()`.execute(forge.ctx.db);
    } else {
      await sql`DROP TRIGGER refuse_insert`.execute(forge.ctx.db);
    }
  };

  beforeAll(async () => {
    forge = await startTestForge({
      // A short lease: the journal row of the failed announcement is repaired soon after it lapses.
      config: { webhook: { allowed_host_list: 'loopback', poll_interval: 0.2, push_lease: 0.5 } },
    });
    const user = await forge.createUser();
    owner = user.username;
    token = await forge.createToken(user, ['write:repository', 'write:user']);
    receiver = await startHookReceiver(SECRET);
  });
  afterAll(async () => {
    await receiver?.close();
    await forge?.close();
  });

  it.each([
    ['activity', 'action'],
    ['webhook outbox', 'hook_task'],
  ])(
    '%s rows refused: the answer is the commit made; activity and push event follow once',
    async (_, table) => {
      const repo: TestRepo = await createRepo(forge, token);
      const hook = await forge.request('POST', `${repo.path}/hooks`, {
        token,
        body: {
          type: 'gitea',
          config: { url: receiver.url, content_type: 'json', secret: SECRET },
          events: ['push'],
          active: true,
        },
      });
      expect(hook.status).toBe(201);
      receiver.received.length = 0;
      const readme = await forge.request('GET', `${repo.path}/contents/README.md`, { token });

      await refuse(table);
      let made: ApiResponse<{ commit: { sha: string } }>;
      let stale: ApiResponse;
      try {
        made = await forge.request('PUT', `${repo.path}/contents/README.md`, {
          token,
          body: { content: b64('changed while rows are refused\n'), sha: readme.body.sha },
        });
        // A writer holding the old sha is refused: the write it would overwrite is real.
        stale = await forge.request('PUT', `${repo.path}/contents/README.md`, {
          token,
          body: { content: b64('stale\n'), sha: readme.body.sha },
        });
      } finally {
        await allow(table);
      }
      // The branch moved, and the answer says so: 200 with the commit now at its head.
      expect(made.status).toBe(200);
      expect(stale.status).toBe(422);
      const sha = made.body.commit.sha;
      const branch = await forge.request('GET', `${repo.path}/branches/main`, { token });
      expect(branch.body.commit.id).toBe(sha);
      const raw = await forge.request('GET', `${repo.path}/raw/README.md`, { token });
      expect(raw.text).toBe('changed while rows are refused\n');

      // The journal's repair announces the commit once the rows are accepted again.
      await receiver.waitFor((received) => received.length >= 1, 30_000);
      expect(receiver.received).toHaveLength(1);
      expect(receiver.received[0]!.headers['x-gitea-event']).toBe('push');
      expect(receiver.received[0]!.payload).toMatchObject({ ref: 'refs/heads/main', after: sha });
      const feed = await forge.request('GET', `/users/${owner}/activities/feeds?only-performed-by=true`, {
        token,
      });
      const pushes = feed.body.filter(
        (row: { op_type: string; content: string }) =>
          row.op_type === 'commit_repo' && row.content.includes(sha),
      );
      expect(pushes).toHaveLength(1);
    },
  );
});
