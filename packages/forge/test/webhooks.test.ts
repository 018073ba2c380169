// Webhooks over HTTP against a real receiver: the hooks API of every scope, each event with Gitea's
// payload and headers, signatures verified as Gitea documents them, retries and the delivery history.
import { Value } from 'typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGit } from '../src/git/command.js';
import {
  CreatePayloadSchema,
  HookSchema,
  PushPayloadSchema,
  ReleasePayloadSchema,
  RepositoryPayloadSchema,
} from '../src/structs/hook.js';
import { startTestForge, type TestForge, type TestUser, uniqueName } from './harness.js';
import { type HookReceiver, startHookReceiver } from './hook-receiver.js';
import { cloneAndCommit, cloneUrl, createRepo, scratchDir } from './repo-fixtures.js';

const SECRET = 'correct horse battery staple';

describe('webhooks', () => {
  let forge: TestForge;
  let owner: TestUser;
  let token: string;
  let receiver: HookReceiver;
  let work: Awaited<ReturnType<typeof scratchDir>>;

  beforeAll(async () => {
    forge = await startTestForge({
      config: { webhook: { allowed_host_list: 'loopback', retry_base_delay: 0.2, poll_interval: 0.2 } },
    });
    owner = await forge.createUser();
    token = await forge.createToken(owner, ['write:repository', 'write:user', 'write:organization']);
    receiver = await startHookReceiver(SECRET);
    work = await scratchDir();
  });
  afterAll(async () => {
    await receiver.close();
    await work.cleanup();
    await forge.close();
  });

  const addHook = async (path: string, body: Record<string, unknown>, as = token) => {
    const response = await forge.request('POST', `${path}/hooks`, { token: as, body });
    expect(response.status, response.text).toBe(201);
    return response.body as { id: number };
  };
  /** Deliveries that arrived for events of the repository named `name`. */
  const deliveriesOf = (name: string) =>
    receiver.received.filter(
      (r) => (r.payload as { repository?: { name?: string } })?.repository?.name === name,
    );
  const giteaHook = (events: string[], extra: Record<string, unknown> = {}) => ({
    type: 'gitea',
    config: { url: receiver.url, content_type: 'json', secret: SECRET },
    events,
    active: true,
    ...extra,
  });
  it('creates, lists, reads, edits and deletes a repository hook without ever returning its secrets', async () => {
    const repo = await createRepo(forge, token);
    const created = await forge.request('POST', `${repo.path}/hooks`, {
      token,
      body: {
        type: 'gitea',
        config: { url: 'http://127.0.0.1:9/x', content_type: 'form', secret: 's3cret' },
        events: ['release', 'PUSH'],
        branch_filter: '{main,release/*}',
        authorization_header: 'Bearer very-secret',
        active: true,
      },
    });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body)).toEqual(Object.keys(HookSchema.properties));
    expect(created.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(created.body).toMatchObject({
      type: 'gitea',
      branch_filter: '{main,release/*}',
      config: { url: 'http://127.0.0.1:9/x', content_type: 'form', http_method: 'POST' },
      events: ['push', 'release'],
      authorization_header: '',
      active: true,
    });
    expect(created.text).not.toContain('s3cret');
    expect(created.text).not.toContain('very-secret');
    const id = created.body.id;

    const list = await forge.request('GET', `${repo.path}/hooks`, { token });
    expect(list.status).toBe(200);
    expect(list.headers.get('x-total-count')).toBe('1');
    expect(list.body).toEqual([created.body]);
    expect((await forge.request('GET', `${repo.path}/hooks/${id}`, { token })).body).toEqual(created.body);

    const edited = await forge.request('PATCH', `${repo.path}/hooks/${id}`, {
      token,
      body: { config: { content_type: 'json' }, events: ['issues'], active: false },
    });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({
      config: { url: 'http://127.0.0.1:9/x', content_type: 'json' },
      events: ['issues', 'issue_assign', 'issue_label', 'issue_milestone', 'issue_comment'],
      branch_filter: '',
      active: false,
    });
    expect((await forge.request('DELETE', `${repo.path}/hooks/${id}`, { token })).status).toBe(204);
    const gone = await forge.request('GET', `${repo.path}/hooks/${id}`, { token });
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({
      errors: null,
      message: "The target couldn't be found.",
      url: `${forge.appUrl}api/swagger`,
    });
  });

  it('sends release published/updated/deleted with Gitea headers and verifiable signatures; drafts never fire', async () => {
    const repo = await createRepo(forge, token);
    const hook = await addHook(repo.path, giteaHook(['release']));
    const draft = await forge.request('POST', `${repo.path}/releases`, {
      token,
      body: { tag_name: 'v0.1', name: 'draft', draft: true },
    });
    expect(draft.status).toBe(201);
    const published = await forge.request('POST', `${repo.path}/releases`, {
      token,
      body: { tag_name: 'v1.0', name: 'one', body: 'notes' },
    });
    expect(published.status).toBe(201);
    const publishDraft = await forge.request('PATCH', `${repo.path}/releases/${draft.body.id}`, {
      token,
      body: { draft: false },
    });
    expect(publishDraft.status).toBe(200);
    await forge.request('PATCH', `${repo.path}/releases/${published.body.id}`, {
      token,
      body: { name: 'uno' },
    });
    await forge.request('DELETE', `${repo.path}/releases/${published.body.id}`, { token });

    const mine = () => deliveriesOf(repo.name);
    await receiver.waitFor(() => mine().length >= 4);
    const deliveries = mine();
    expect(
      deliveries.map((r) => [
        (r.payload as { action: string }).action,
        (r.payload as { release: { tag_name: string } }).release.tag_name,
      ]),
    ).toEqual([
      ['published', 'v1.0'],
      ['published', 'v0.1'],
      ['updated', 'v1.0'],
      ['deleted', 'v1.0'],
    ]);
    for (const delivery of deliveries) {
      expect(delivery.signatureValid).toBe(true);
      expect(Value.Check(ReleasePayloadSchema, delivery.payload)).toBe(true);
      expect(delivery.method).toBe('POST');
      expect(delivery.headers['content-type']).toBe('application/json');
      const id = String(delivery.headers['x-gitea-delivery']);
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(delivery.headers).toMatchObject({
        'x-gitea-event': 'release',
        'x-gitea-event-type': 'release',
        'x-gogs-event': 'release',
        'x-github-event': 'release',
        'x-gogs-delivery': id,
        'x-github-delivery': id,
        'x-gitea-hook-installation-target-type': 'repository',
      });
      expect(delivery.headers['x-hub-signature']).toMatch(/^sha1=[0-9a-f]{40}$/);
    }
    expect((deliveries[0]!.payload as { release: { name: string; body: string } }).release).toMatchObject({
      name: 'one',
      body: 'notes',
      draft: false,
    });
    // The history lists them newest first, all delivered. The receiver may hold the last body before the
    // worker has recorded its answer: wait for that (bounded), then check the whole list.
    const deliveriesPath = `${repo.path}/hooks/${hook.id}/deliveries`;
    let history = await forge.request('GET', deliveriesPath, { token });
    for (let tries = 0; tries < 200; tries++) {
      if (history.body.every((d: { state: string }) => d.state === 'delivered')) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
      history = await forge.request('GET', deliveriesPath, { token });
    }
    expect(history.status).toBe(200);
    expect(history.headers.get('x-total-count')).toBe('4');
    expect(history.body.map((d: { state: string; action: string }) => [d.state, d.action])).toEqual([
      ['delivered', 'deleted'],
      ['delivered', 'updated'],
      ['delivered', 'published'],
      ['delivered', 'published'],
    ]);
  });

  it('sends push and create for a git push over smart HTTP, through the branch filter', async () => {
    const repo = await createRepo(forge, token);
    await addHook(repo.path, giteaHook(['push', 'create', 'delete'], { branch_filter: 'feature/*' }));
    const copy = await cloneAndCommit(cloneUrl(forge, repo), work.dir);
    const push = cloneUrl(forge, repo, { user: owner.username, secret: token });
    // main is not in the filter: nothing; a new feature branch: create + push.
    await runGit(['-C', copy, 'push', '--quiet', push, 'main']);
    await runGit(['-C', copy, 'push', '--quiet', push, 'main:refs/heads/feature/x']);
    await runGit(['-C', copy, 'push', '--quiet', push, ':refs/heads/feature/x']);
    const mine = () => deliveriesOf(repo.name);
    await receiver.waitFor(() => mine().length >= 3);
    // One push raises create and push together; their deliveries may go out in either order.
    const events = mine().map((r) => r.headers['x-gitea-event']);
    expect([...events].sort()).toEqual(['create', 'delete', 'push']);
    const byEvent = (name: string) => mine().find((r) => r.headers['x-gitea-event'] === name);
    const [create, pushed, deleted] = [byEvent('create'), byEvent('push'), byEvent('delete')];
    expect(Value.Check(CreatePayloadSchema, create!.payload)).toBe(true);
    expect(create!.payload).toMatchObject({ ref: 'feature/x', ref_type: 'branch' });
    expect(Value.Check(PushPayloadSchema, pushed!.payload)).toBe(true);
    const head = (await runGit(['-C', copy, 'rev-parse', 'HEAD'])).stdout.trim();
    expect(pushed!.payload).toMatchObject({
      ref: 'refs/heads/feature/x',
      before: '0000000000000000000000000000000000000000',
      after: head,
      total_commits: 2,
      pusher: { login: owner.username },
      sender: { login: owner.username },
    });
    const commits = (pushed!.payload as { commits: Array<{ id: string; added: string[] }> }).commits;
    expect(commits[0]).toMatchObject({ id: head, added: ['change.txt'] });
    expect(deleted!.payload).toMatchObject({ ref: 'feature/x', ref_type: 'branch', pusher_type: 'user' });
    for (const delivery of mine()) expect(delivery.signatureValid).toBe(true);
  });

  it('a contents-API commit sends push as a git push of it would', async () => {
    const repo = await createRepo(forge, token);
    await addHook(repo.path, giteaHook(['push']));
    const made = await forge.request('POST', `${repo.path}/contents/Formula/tool.rb`, {
      token,
      body: { content: Buffer.from('class Tool\nend\n').toString('base64'), message: 'formula' },
    });
    expect(made.status).toBe(201);
    const mine = () => deliveriesOf(repo.name);
    await receiver.waitFor(() => mine().length >= 1);
    const [pushed] = mine();
    expect(pushed!.headers['x-gitea-event']).toBe('push');
    expect(Value.Check(PushPayloadSchema, pushed!.payload)).toBe(true);
    expect(pushed!.payload).toMatchObject({
      ref: 'refs/heads/main',
      before: made.body.commit.parents[0].sha,
      after: made.body.commit.sha,
      total_commits: 1,
      pusher: { login: owner.username },
    });
    const commits = (pushed!.payload as { commits: Array<{ id: string; added: string[] }> }).commits;
    expect(commits[0]).toMatchObject({ id: made.body.commit.sha, added: ['Formula/tool.rb'] });
  });

  it('sends repository created and deleted to user hooks', async () => {
    const user = await forge.createUser();
    const userToken = await forge.createToken(user, ['write:repository', 'write:user']);
    await addHook('/user', giteaHook(['repository']), userToken);
    const repo = await createRepo(forge, userToken);
    expect((await forge.request('DELETE', repo.path, { token: userToken })).status).toBe(204);
    const mine = () => deliveriesOf(repo.name);
    await receiver.waitFor(() => mine().length >= 2);
    expect(mine().map((r) => (r.payload as { action: string }).action)).toEqual(['created', 'deleted']);
    for (const delivery of mine()) {
      expect(Value.Check(RepositoryPayloadSchema, delivery.payload)).toBe(true);
      expect(delivery.headers['x-gitea-hook-installation-target-type']).toBe('user');
      expect(delivery.signatureValid).toBe(true);
    }
  });

  it('signs the JSON of a form hook and sends payload=<json>', async () => {
    const repo = await createRepo(forge, token);
    await addHook(repo.path, {
      ...giteaHook(['release']),
      config: { url: receiver.url, content_type: 'form', secret: SECRET },
    });
    await forge.request('POST', `${repo.path}/releases`, { token, body: { tag_name: 'v1' } });
    const mine = () => deliveriesOf(repo.name);
    await receiver.waitFor(() => mine().length >= 1);
    const [delivery] = mine();
    expect(delivery!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(delivery!.body.startsWith('payload=')).toBe(true);
    expect(delivery!.signatureValid).toBe(true);
  });

  it('retries a receiver that is down until it is back, under the same delivery id', async () => {
    const down = await startHookReceiver(SECRET);
    const port = down.port;
    await down.close();
    const repo = await createRepo(forge, token);
    const hook = await addHook(repo.path, {
      ...giteaHook(['release']),
      config: { url: `http://127.0.0.1:${port}/hook`, content_type: 'json', secret: SECRET },
    });
    for (const tag of ['a1', 'a2', 'a3']) {
      expect(
        (await forge.request('POST', `${repo.path}/releases`, { token, body: { tag_name: tag } })).status,
      ).toBe(201);
    }
    // Wait until every delivery failed at least once, then bring the receiver back on the same port.
    const attempted = async () => {
      const list = await forge.request('GET', `${repo.path}/hooks/${hook.id}/deliveries`, { token });
      return list.body as Array<{ attempts: number; state: string; guid: string; status: string }>;
    };
    for (let i = 0; i < 400; i += 1) {
      const deliveries = await attempted();
      if (deliveries.length === 3 && deliveries.every((d) => d.attempts >= 1 && d.state === 'pending')) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const before = await attempted();
    expect(before).toHaveLength(3);
    // A retry may be under way as we look ('delivering'); none can have got through.
    expect(
      before.every((d) => d.state !== 'delivered' && d.attempts >= 1 && /ECONNREFUSED/.test(d.status)),
    ).toBe(true);
    const back = await startHookReceiver(SECRET, port);
    try {
      await back.waitFor((r) => r.length >= 3);
      expect(new Set(back.received.map((r) => r.headers['x-gitea-delivery']))).toEqual(
        new Set(before.map((d) => d.guid)),
      );
      expect(back.received.every((r) => r.signatureValid)).toBe(true);
      const after = await attempted();
      expect(after.every((d) => d.state === 'delivered' && d.attempts >= 2 && d.status === 'OK')).toBe(true);
    } finally {
      await back.close();
    }
  });

  it('shows a delivery with its request (no secrets) and the answer, and redelivers it as a new delivery, keeping the first in the history', async () => {
    const repo = await createRepo(forge, token);
    const hook = await addHook(
      repo.path,
      giteaHook(['release'], { authorization_header: 'Bearer hook-token-123' }),
    );
    await forge.request('POST', `${repo.path}/releases`, { token, body: { tag_name: 'r1' } });
    const mine = () => deliveriesOf(repo.name);
    await receiver.waitFor(() => mine().length >= 1);
    expect(mine()[0]!.headers.authorization).toBe('Bearer hook-token-123');
    const list = await forge.request('GET', `${repo.path}/hooks/${hook.id}/deliveries`, { token });
    const [summary] = list.body as Array<{ id: number; guid: string }>;
    let detail = await forge.request('GET', `${repo.path}/hooks/${hook.id}/deliveries/${summary!.id}`, {
      token,
    });
    for (let i = 0; i < 200 && detail.body.state !== 'delivered'; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      detail = await forge.request('GET', `${repo.path}/hooks/${hook.id}/deliveries/${summary!.id}`, {
        token,
      });
    }
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({
      id: summary!.id,
      guid: summary!.guid,
      event: 'release',
      action: 'published',
      state: 'delivered',
      status: 'OK',
      status_code: 200,
      redelivery: false,
      url: receiver.url,
      response: { payload: expect.stringMatching(/^received \d+$/) },
    });
    expect(detail.body.request.headers['X-Gitea-Delivery']).toBe(summary!.guid);
    expect(detail.body.request.payload.release.tag_name).toBe('r1');
    expect(detail.text).not.toContain('hook-token-123');
    expect(detail.text).not.toContain(SECRET);

    const again = await forge.request(
      'POST',
      `${repo.path}/hooks/${hook.id}/deliveries/${summary!.id}/attempts`,
      { token },
    );
    expect(again.status).toBe(202);
    // As Gitea's ReplayHookTask: a new delivery of the same payload, with its own id.
    expect(again.body).toMatchObject({ guid: expect.any(String), redelivery: true, event: 'release' });
    expect(again.body.id).not.toBe(summary!.id);
    expect(again.body.guid).not.toBe(summary!.guid);
    await receiver.waitFor(() => mine().length >= 2);
    expect(mine()[1]!.headers['x-gitea-delivery']).toBe(again.body.guid);
    expect(mine()[1]!.body).toBe(mine()[0]!.body);
    // The history keeps both: the original as it was, and the redelivery once it went out.
    let history = await forge.request('GET', `${repo.path}/hooks/${hook.id}/deliveries`, { token });
    for (let i = 0; i < 200 && history.body[0]?.state !== 'delivered'; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      history = await forge.request('GET', `${repo.path}/hooks/${hook.id}/deliveries`, { token });
    }
    expect(history.headers.get('x-total-count')).toBe('2');
    expect(history.body).toMatchObject([
      { id: again.body.id, guid: again.body.guid, redelivery: true, state: 'delivered', attempts: 1 },
      { id: summary!.id, guid: summary!.guid, redelivery: false, state: 'delivered', attempts: 1 },
    ]);
    const original = await forge.request('GET', `${repo.path}/hooks/${hook.id}/deliveries/${summary!.id}`, {
      token,
    });
    expect(original.body).toEqual(detail.body);
    const missing = await forge.request('POST', `${repo.path}/hooks/${hook.id}/deliveries/999999/attempts`, {
      token,
    });
    expect(missing.status).toBe(404);
  });

  it('delivers nothing for a hook whose creator lost admin access, and says why', async () => {
    const orgName = uniqueName('org');
    await forge.createOrg(token, { username: orgName });
    const admin = await forge.createUser();
    const adminToken = await forge.createToken(admin, ['write:repository']);
    const team = await forge.createTeam(token, orgName, {
      name: 'admins',
      permission: 'admin',
      units: ['repo.code', 'repo.releases'],
    });
    await forge.addTeamMember(token, team.id, admin.username);
    const repo = await createRepo(forge, token, { org: orgName });
    await forge.request('PUT', `${repo.path}/teams/admins`, { token });
    const hook = await addHook(repo.path, giteaHook(['release']), adminToken);
    // Demoted: out of the admin team.
    expect(
      (await forge.request('DELETE', `/teams/${team.id}/members/${admin.username}`, { token })).status,
    ).toBe(204);
    await forge.request('POST', `${repo.path}/releases`, { token, body: { tag_name: 'd1' } });
    let deliveries: Array<{ state: string; status: string }> = [];
    for (let i = 0; i < 400; i += 1) {
      deliveries = (await forge.request('GET', `${repo.path}/hooks/${hook.id}/deliveries`, { token })).body;
      if (deliveries[0]?.state === 'dropped') break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({
      state: 'dropped',
      status: 'the hook creator no longer administers the repository',
    });
    expect(
      receiver.received.some(
        (r) => (r.payload as { repository?: { name?: string } })?.repository?.name === repo.name,
      ),
    ).toBe(false);
  });

  it('sends a test push to one hook, and system and organization hooks say where they are defined', async () => {
    const orgName = uniqueName('org');
    await forge.createOrg(token, { username: orgName });
    const repo = await createRepo(forge, token, { org: orgName });
    const repoHook = await addHook(repo.path, giteaHook(['release']));
    await addHook(`/orgs/${orgName}`, giteaHook(['release']));
    const system = await forge.request('POST', '/admin/hooks', {
      token: forge.admin.token,
      body: giteaHook(['release']),
    });
    expect(system.status).toBe(201);
    const tested = await forge.request('POST', `${repo.path}/hooks/${repoHook.id}/tests`, { token });
    expect(tested.status).toBe(204);
    await receiver.waitFor(() => deliveriesOf(repo.name).length >= 1);
    const [test] = deliveriesOf(repo.name);
    expect(test!.headers['x-gitea-event']).toBe('push');
    expect(test!.payload).toMatchObject({ ref: 'refs/heads/main', total_commits: 1 });
    expect(Value.Check(PushPayloadSchema, test!.payload)).toBe(true);
    await forge.request('POST', `${repo.path}/releases`, { token, body: { tag_name: 'v9' } });
    await receiver.waitFor(() => deliveriesOf(repo.name).length >= 4);
    const targets = deliveriesOf(repo.name)
      .slice(1)
      .map((r) => r.headers['x-gitea-hook-installation-target-type'])
      .sort();
    expect(targets).toEqual(['organization', 'repository', 'system']);
    // The system hook stays for the other tests' repositories: remove it.
    expect(
      (await forge.request('DELETE', `/admin/hooks/${system.body.id}`, { token: forge.admin.token })).status,
    ).toBe(204);
  });
});
