// What leaves forge besides the Gitea payload, and how the client behaves on the wire: Slack, Discord
// and Microsoft Teams bodies as Gitea builds them (services/webhook/{slack,discord,msteams}.go), TLS
// verification and `[webhook] skip_tls_verify` against a real HTTPS receiver with a self-signed
// certificate, the delivery timeout against a receiver that never answers, and the response-size bound
// against one that streams an endless body.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer as createHttpServer, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGit } from '../src/git/command.js';
import { startTestForge, type TestForge, type TestUser } from './harness.js';
import { type HookReceiver, type ReceivedHook, startHookReceiver } from './hook-receiver.js';
import { cloneAndCommit, cloneUrl, createRepo, scratchDir, type TestRepo } from './repo-fixtures.js';

// biome-ignore lint/suspicious/noExplicitAny: payloads are compared field by field.
type Json = any;

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}
const close = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

describe('webhook delivery formats and the delivery client', () => {
  let forge: TestForge;
  let owner: TestUser;
  let token: string;
  let receiver: HookReceiver;
  let work: Awaited<ReturnType<typeof scratchDir>>;

  beforeAll(async () => {
    forge = await startTestForge({
      config: {
        webhook: { allowed_host_list: 'loopback', poll_interval: 0.2, deliver_timeout: 1, max_attempts: 1 },
      },
    });
    owner = await forge.createUser();
    token = await forge.createToken(owner, ['write:repository', 'write:user']);
    receiver = await startHookReceiver();
    work = await scratchDir();
  });
  afterAll(async () => {
    await receiver.close();
    await work.cleanup();
    await forge.close();
  });

  const addHook = async (repo: TestRepo, body: Record<string, unknown>) => {
    const response = await forge.request('POST', `${repo.path}/hooks`, { token, body });
    expect(response.status, response.text).toBe(201);
    return response.body.id as number;
  };
  /** Waits until the hook's only delivery has finished, and returns it with its detail. */
  const finishedDelivery = async (repo: TestRepo, hookId: number) => {
    for (let i = 0; i < 800; i += 1) {
      const list = await forge.request('GET', `${repo.path}/hooks/${hookId}/deliveries`, { token });
      const [delivery] = list.body as Array<{ id: number; state: string }>;
      if (delivery && delivery.state !== 'pending' && delivery.state !== 'delivering') {
        return (
          await forge.request('GET', `${repo.path}/hooks/${hookId}/deliveries/${delivery.id}`, { token })
        ).body as Json;
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error('the delivery did not finish');
  };

  it('renders Slack, Discord and Microsoft Teams bodies from the Gitea payload as Gitea does', async () => {
    const repo = await createRepo(forge, token);
    const events = ['push', 'create', 'release'];
    const hookOf = (type: string, extra: Record<string, unknown> = {}) => ({
      type,
      config: { url: `${receiver.url}?type=${type}`, content_type: 'json', ...extra },
      events,
      active: true,
    });
    await addHook(repo, hookOf('gitea'));
    await addHook(repo, hookOf('slack', { channel: '#builds', username: 'forge-bot', color: '#123456' }));
    await addHook(repo, hookOf('discord'));
    await addHook(repo, hookOf('msteams'));

    const copy = await cloneAndCommit(cloneUrl(forge, repo), work.dir);
    const push = cloneUrl(forge, repo, { user: owner.username, secret: token });
    await runGit(['-C', copy, 'push', '--quiet', push, 'main']);
    await runGit(['-C', copy, 'push', '--quiet', push, 'main:refs/heads/feature/x']);
    const release = await forge.request('POST', `${repo.path}/releases`, {
      token,
      body: { tag_name: 'v1.0', name: 'One', body: 'Notes & <fixes>' },
    });
    expect(release.status).toBe(201);

    // main: push; feature/x: create + push; v1.0: create + push (the tag) + release; for 4 hooks.
    const mine = () => receiver.received.filter((r) => r.path.startsWith('/hook?type=') && sameRepo(r, repo));
    await receiver.waitFor(() => mine().length >= 24);
    const giteaOf = (event: string, match: (p: Json) => boolean) =>
      mine().find(
        (r) => r.path === '/hook?type=gitea' && r.headers['x-gitea-event'] === event && match(r.payload),
      )!.payload as Json;
    const bodiesOf = (type: string, event: string) =>
      mine()
        .filter((r) => r.path === `/hook?type=${type}` && r.headers['x-gitea-event'] === event)
        .map((r) => r.payload as Json);
    for (const r of mine()) expect(r.headers['content-type']).toBe('application/json');

    const pushed = giteaOf('push', (p) => p.ref === 'refs/heads/main');
    const html = pushed.repository.html_url as string;
    const full = pushed.repository.full_name as string;
    const commit = pushed.commits[0];
    const sha7 = String(commit.id).slice(0, 7);
    const sender = pushed.sender;
    expect(pushed.total_commits).toBe(1);
    expect(pushed.compare_url).toMatch(/\/compare\/[0-9a-f]{40}\.\.\.[0-9a-f]{40}$/);

    // Slack: `<url|text>` links, the commit lines in one attachment with the hook's color.
    expect(bodiesOf('slack', 'push')).toContainEqual({
      channel: '#builds',
      text: `[<${html}|${full}>:<${html}/src/branch/main|main>] <${pushed.compare_url}|1 new commit> pushed by ${owner.username}`,
      username: 'forge-bot',
      icon_url: '',
      unfurl_links: 0,
      link_names: 0,
      attachments: [
        {
          fallback: '',
          color: '#123456',
          title: html,
          title_link: html,
          text: `<${commit.url}|${sha7}>: add change.txt - Test Author`,
        },
      ],
    });
    expect(bodiesOf('slack', 'create').map((b) => b.text)).toContain(
      `[<${html}|${full}>:<${html}/src/branch/feature/x|feature/x>] branch created by ${owner.username}`,
    );
    const slackRelease = bodiesOf('slack', 'release')[0];
    expect(slackRelease).toEqual({
      channel: '#builds',
      text: `[<${html}|${full}>] Release created: <${html}/releases/tag/v1.0|v1.0> by <${sender.html_url}|${owner.username}>`,
      username: 'forge-bot',
      icon_url: '',
      unfurl_links: 0,
      link_names: 0,
      attachments: null,
    });

    // Discord: one embed; a single-commit push links the commit.
    const author = { name: owner.username, url: sender.html_url, icon_url: sender.avatar_url };
    expect(bodiesOf('discord', 'push')).toContainEqual({
      wait: false,
      content: '',
      username: '',
      tts: false,
      embeds: [
        {
          title: `[${full}:main] 1 new commit`,
          description: `[${sha7}](${commit.url}) add change.txt - Test Author`,
          url: commit.url,
          color: 0x1ac600,
          footer: { text: '' },
          author,
          fields: null,
        },
      ],
    });
    const releasePayload = giteaOf('release', () => true);
    expect(bodiesOf('discord', 'release')[0].embeds).toEqual([
      {
        title: `[${full}] Release created: v1.0`,
        description: 'Notes & <fixes>',
        url: releasePayload.release.html_url,
        color: 0x1ac600,
        footer: { text: '' },
        author,
        fields: null,
      },
    ]);
    expect(bodiesOf('discord', 'create').map((b) => b.embeds[0].title)).toEqual(
      expect.arrayContaining([`[${full}] branch feature/x created`, `[${full}] tag v1.0 created`]),
    );

    // Microsoft Teams: a MessageCard with facts and a "View in Gitea" action.
    const card = (title: string, text: string, uri: string, facts: Json[]) => ({
      '@type': 'MessageCard',
      '@context': 'https://schema.org/extensions',
      themeColor: '1ac600',
      title,
      summary: title,
      sections: [
        {
          activityTitle: sender.full_name,
          activitySubtitle: owner.username,
          activityImage: sender.avatar_url,
          facts: [{ name: 'Repository:', value: full }, ...facts],
          text,
        },
      ],
      potentialAction: [{ '@type': 'OpenUri', name: 'View in Gitea', targets: [{ os: 'default', uri }] }],
    });
    expect(bodiesOf('msteams', 'push')).toContainEqual(
      card(
        `[${full}:main] 1 new commit`,
        `[${sha7}](${commit.url}) add change.txt - Test Author`,
        commit.url,
        [{ name: 'Commit count:', value: '1' }],
      ),
    );
    expect(bodiesOf('msteams', 'create')).toContainEqual(
      card(`[${full}] branch feature/x created`, '', `${html}/src/feature/x`, [
        { name: 'branch:', value: 'feature/x' },
      ]),
    );
    expect(bodiesOf('msteams', 'release')).toEqual([
      card(`[${full}] Release created: v1.0`, '', releasePayload.release.url, [
        { name: 'Tag:', value: 'v1.0' },
      ]),
    ]);
  });

  it('verifies TLS certificates unless skip_tls_verify is set', async () => {
    const dir = work.dir;
    const keyFile = join(dir, 'key.pem');
    const certFile = join(dir, 'cert.pem');
    await promisify(execFile)('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ]).catch((error: unknown) => {
      throw new Error(
        `openssl is needed to make a self-signed certificate (apt-get install openssl): ${error}`,
      );
    });
    const received: string[] = [];
    const https = createHttpsServer(
      { key: await readFile(keyFile), cert: await readFile(certFile) },
      (request, response) => {
        let body = '';
        request.on('data', (chunk) => {
          body += chunk;
        });
        request.on('end', () => {
          received.push(body);
          response.writeHead(200).end('secure');
        });
      },
    );
    const port = await listen(https);
    const trusting = await startTestForge({
      config: { webhook: { allowed_host_list: 'loopback', poll_interval: 0.2, skip_tls_verify: true } },
    });
    try {
      const hook = {
        type: 'gitea',
        config: { url: `https://127.0.0.1:${port}/hook`, content_type: 'json' },
        events: ['release'],
        active: true,
      };
      // Verifying (the default): the self-signed certificate is refused, nothing reaches the receiver.
      const repo = await createRepo(forge, token);
      const hookId = await addHook(repo, hook);
      await forge.request('POST', `${repo.path}/releases`, { token, body: { tag_name: 'v1' } });
      const refused = await finishedDelivery(repo, hookId);
      expect(refused).toMatchObject({ state: 'failed', status_code: 0, attempts: 1 });
      expect(refused.status).toMatch(/self[- ]signed certificate/);
      expect(received).toHaveLength(0);

      // skip_tls_verify = true: delivered over TLS.
      const user = await trusting.createUser();
      const trustingToken = await trusting.createToken(user, ['write:repository', 'write:user']);
      const other = await createRepo(trusting, trustingToken);
      const created = await trusting.request('POST', `${other.path}/hooks`, {
        token: trustingToken,
        body: hook,
      });
      expect(created.status).toBe(201);
      await trusting.request('POST', `${other.path}/releases`, {
        token: trustingToken,
        body: { tag_name: 'v1' },
      });
      for (let i = 0; i < 800 && received.length === 0; i += 1) await new Promise((r) => setTimeout(r, 25));
      expect(received).toHaveLength(1);
      expect(JSON.parse(received[0]!).release.tag_name).toBe('v1');
    } finally {
      await trusting.close();
      await close(https);
    }
  });

  it('gives up an attempt at the delivery timeout when the receiver never answers', async () => {
    let accepted = 0;
    // Reads the request, never answers.
    const silent = createHttpServer((request) => {
      accepted += 1;
      request.resume();
    });
    const port = await listen(silent);
    try {
      const repo = await createRepo(forge, token);
      const hookId = await addHook(repo, {
        type: 'gitea',
        config: { url: `http://127.0.0.1:${port}/hook`, content_type: 'json' },
        events: ['release'],
        active: true,
      });
      await forge.request('POST', `${repo.path}/releases`, { token, body: { tag_name: 'v1' } });
      const delivery = await finishedDelivery(repo, hookId);
      expect(accepted).toBe(1);
      expect(delivery).toMatchObject({
        state: 'failed',
        status: 'Delivery: timeout after 1000 ms',
        status_code: 0,
        attempts: 1,
        response: { headers: {}, payload: '' },
      });
    } finally {
      await close(silent);
    }
  });

  it('reads at most 64 KiB of an answer and keeps 8 KiB of it, however long the receiver streams', async () => {
    let streamClosed = false;
    const chunk = Buffer.alloc(16 * 1024, 'x');
    // Answers 200 and writes forever, until forge closes the connection.
    const endless = createHttpServer((request, response: ServerResponse) => {
      request.resume();
      response.writeHead(200, { 'content-type': 'text/plain' });
      const pump = () => {
        while (!response.destroyed && response.write(chunk)) {
          // keep writing while the socket takes it
        }
        if (!response.destroyed) response.once('drain', pump);
      };
      response.on('close', () => {
        streamClosed = true;
      });
      pump();
    });
    const port = await listen(endless);
    try {
      const repo = await createRepo(forge, token);
      const hookId = await addHook(repo, {
        type: 'gitea',
        config: { url: `http://127.0.0.1:${port}/hook`, content_type: 'json' },
        events: ['release'],
        active: true,
      });
      await forge.request('POST', `${repo.path}/releases`, { token, body: { tag_name: 'v1' } });
      const delivery = await finishedDelivery(repo, hookId);
      expect(delivery).toMatchObject({ state: 'delivered', status: 'OK', status_code: 200, attempts: 1 });
      expect(delivery.response.payload).toBe('x'.repeat(8 * 1024));
      for (let i = 0; i < 800 && !streamClosed; i += 1) await new Promise((r) => setTimeout(r, 25));
      expect(streamClosed).toBe(true);
    } finally {
      await close(endless);
    }
  });
});

/** Whether a delivery is about `repo` (chat bodies name it in their text, Gitea payloads in `repository`). */
function sameRepo(r: ReceivedHook, repo: TestRepo): boolean {
  return JSON.stringify(r.payload).includes(`${repo.owner}/${repo.name}`);
}
