// kill -9 between a git push's ref update and the recording of its webhook events: the events are not
// lost. A post-receive hook installed in the repository (git runs it after the refs moved, before
// receive-pack ends and forge records the events) holds the push at exactly that point while the test
// kills the process. The restarted forge finds the journalled push and delivers its `create` and
// `push` events once. Runs on SQLite and, in the forge-postgres project, on PostgreSQL.
import { access, chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGit } from '../src/git/command.js';
import { type HookReceiver, startHookReceiver } from './hook-receiver.js';
import { type ForgeProcess, spawnForge } from './postgres/forge-process.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

const SECRET = 'push-crash-secret';
const ZERO = '0'.repeat(40);
const IDENTITY = {
  GIT_AUTHOR_NAME: 'Crash Tester',
  GIT_AUTHOR_EMAIL: 'crash@example.com',
  GIT_COMMITTER_NAME: 'Crash Tester',
  GIT_COMMITTER_EMAIL: 'crash@example.com',
};

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('push webhook events survive kill -9 after the ref update', () => {
  let pushHookId = 0;
  let dataDir: string;
  let configFile: string;
  let database: TestDatabase;
  let forge: ForgeProcess | undefined;
  let receiver: HookReceiver;
  let password = '';

  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${forge!.url}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Basic ${Buffer.from(`forge-admin:${password}`).toString('base64')}`,
        'content-type': 'application/json',
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'forge-push-crash-'));
    database = await createTestDatabase(dataDir);
    receiver = await startHookReceiver(SECRET);
    configFile = join(dataDir, 'forge.toml');
    // A short lease: the restarted process may take over the killed one's push soon after the restart.
    await writeFile(
      configFile,
      '[webhook]\nallowed_host_list = "loopback"\nretry_base_delay = 0.2\npoll_interval = 0.2\npush_lease = 0.5\n',
    );
    forge = await spawnForge({ dataDir, databaseUrl: database.url, configFile });
    password = /password: (\S+)/.exec(forge.printed.join('\n'))?.[1] ?? '';
    expect((await api('POST', '/user/repos', { name: 'pushed', auto_init: true })).status).toBe(201);
    const hook = await api('POST', '/repos/forge-admin/pushed/hooks', {
      type: 'gitea',
      config: { url: receiver.url, content_type: 'json', secret: SECRET },
      events: ['push', 'create'],
      active: true,
    });
    expect(hook.status).toBe(201);
    pushHookId = ((await hook.json()) as { id: number }).id;
  }, 60_000);

  afterAll(async () => {
    await forge?.stop();
    await receiver?.close();
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('delivers create and push once the forge is back', async () => {
    const gitDir = join(dataDir, 'repositories', 'forge-admin', 'pushed.git');
    const reached = join(dataDir, 'post-receive-reached');
    const proceed = join(dataDir, 'post-receive-proceed');
    await writeFile(
      join(gitDir, 'hooks', 'post-receive'),
      `#!/bin/sh\ntouch '${reached}'\nwhile [ ! -f '${proceed}' ]; do sleep 0.05; done\n`,
    );
    await chmod(join(gitDir, 'hooks', 'post-receive'), 0o755);

    const url = new URL(`${forge!.url}/forge-admin/pushed.git`);
    url.username = 'forge-admin';
    url.password = encodeURIComponent(password);
    const copy = join(dataDir, 'copy');
    await runGit(['clone', '--quiet', url.href, copy]);
    await writeFile(join(copy, 'crash.txt'), 'pushed before the crash\n');
    await runGit(['-C', copy, 'add', 'crash.txt']);
    await runGit(['-C', copy, 'commit', '--quiet', '-m', 'pushed before the crash'], { env: IDENTITY });
    const head = (await runGit(['-C', copy, 'rev-parse', 'HEAD'])).stdout.trim();

    // The push fails on the client (the server dies); what matters is that the ref moved.
    const push = runGit(['-C', copy, 'push', '--quiet', url.href, 'HEAD:refs/heads/feature']).catch(
      () => undefined,
    );
    await until(() => exists(reached), 'the post-receive hook');
    expect((await runGit(['rev-parse', 'refs/heads/feature'], { gitDir })).stdout.trim()).toBe(head);
    await forge!.kill();
    await writeFile(proceed, '');
    await push;
    expect(receiver.received).toHaveLength(0);

    forge = await spawnForge({ dataDir, databaseUrl: database.url, configFile });
    await receiver.waitFor((r) => r.length >= 2, 30_000);
    const byEvent = new Map(receiver.received.map((r) => [String(r.headers['x-gitea-event']), r]));
    expect([...byEvent.keys()].sort()).toEqual(['create', 'push']);
    expect(receiver.received.every((r) => r.signatureValid)).toBe(true);
    expect(byEvent.get('create')!.payload).toMatchObject({ ref: 'feature', ref_type: 'branch', sha: head });
    expect(byEvent.get('push')!.payload).toMatchObject({
      ref: 'refs/heads/feature',
      before: ZERO,
      after: head,
      total_commits: 2,
      pusher: { login: 'forge-admin' },
    });
    // Newest first: the commit pushed before the crash leads.
    const commits = (byEvent.get('push')!.payload as { commits: Array<{ id: string; message: string }> })
      .commits;
    expect(commits[0]).toMatchObject({ id: head, message: 'pushed before the crash\n' });
    // Recorded once: the history holds exactly these two deliveries.
    const history = await api('GET', `/repos/forge-admin/pushed/hooks/${pushHookId}/deliveries`);
    const deliveries = (await history.json()) as Array<{ event: string; guid: string }>;
    expect(deliveries.map((d) => d.event).sort()).toEqual(['create', 'push']);
    expect(new Set(deliveries.map((d) => d.guid))).toEqual(
      new Set(receiver.received.map((r) => String(r.headers['x-gitea-delivery']))),
    );
  }, 90_000);
  it('delivers create and push of a tag a release created, when the process died before the release row', async () => {
    expect((await api('POST', '/user/repos', { name: 'tagged', auto_init: true })).status).toBe(201);
    const hook = await api('POST', '/repos/forge-admin/tagged/hooks', {
      type: 'gitea',
      config: { url: `${receiver.url}?repo=tagged`, content_type: 'json', secret: SECRET },
      events: ['push', 'create', 'release'],
      active: true,
    });
    expect(hook.status).toBe(201);
    const hookId = ((await hook.json()) as { id: number }).id;
    // git runs reference-transaction for forge's own tag creation too: once the tag is committed, the
    // hook holds the write there, before forge writes the release row and its deliveries.
    const gitDir = join(dataDir, 'repositories', 'forge-admin', 'tagged.git');
    const reached = join(dataDir, 'tag-reached');
    const proceed = join(dataDir, 'tag-proceed');
    const script = [
      '#!/bin/sh',
      '[ "$1" = committed ] || exit 0',
      'grep -q refs/tags/crash-tag || exit 0',
      `touch '${reached}'`,
      `while [ ! -f '${proceed}' ]; do sleep 0.05; done`,
      '',
    ].join('\n');
    await writeFile(join(gitDir, 'hooks', 'reference-transaction'), script);
    await chmod(join(gitDir, 'hooks', 'reference-transaction'), 0o755);

    const release = api('POST', '/repos/forge-admin/tagged/releases', { tag_name: 'crash-tag' }).catch(
      () => null,
    );
    await until(() => exists(reached), 'the reference-transaction hook');
    const tagged = (await runGit(['rev-parse', 'refs/tags/crash-tag^{commit}'], { gitDir })).stdout.trim();
    await forge!.kill();
    await writeFile(proceed, '');
    expect(await release).toBeNull();
    const mine = () => receiver.received.filter((r) => r.path === '/hook?repo=tagged');
    expect(mine()).toHaveLength(0);

    forge = await spawnForge({ dataDir, databaseUrl: database.url, configFile });
    await receiver.waitFor(() => mine().length >= 2, 30_000);
    const byEvent = new Map(mine().map((r) => [String(r.headers['x-gitea-event']), r]));
    expect([...byEvent.keys()].sort()).toEqual(['create', 'push']);
    expect(mine().every((r) => r.signatureValid)).toBe(true);
    expect(byEvent.get('create')!.payload).toMatchObject({ ref: 'crash-tag', ref_type: 'tag', sha: tagged });
    expect(byEvent.get('push')!.payload).toMatchObject({
      ref: 'refs/tags/crash-tag',
      before: ZERO,
      pusher: { login: 'forge-admin' },
    });
    // The release was never acknowledged, so no release event; the tag's events are recorded once.
    const history = await api('GET', `/repos/forge-admin/tagged/hooks/${hookId}/deliveries`);
    const deliveries = (await history.json()) as Array<{ event: string }>;
    expect(deliveries.map((d) => d.event).sort()).toEqual(['create', 'push']);
  }, 90_000);
});
