// Deleting a user or an organization deletes its hooks and their pending deliveries, and forge's
// `/metrics` (Gitea's [metrics] ENABLED and TOKEN) shows the outbox emptying. Retries are an hour
// apart here, so a delivery still in the outbox after the deletion would stay counted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestForge, type TestForge, uniqueName } from './harness.js';
import { startHookReceiver } from './hook-receiver.js';

const METRICS_TOKEN = 'scrape-me-9f2c';

describe('deleting the owner of hooks', () => {
  let forge: TestForge;
  let deadUrl = '';

  beforeAll(async () => {
    forge = await startTestForge({
      config: {
        metrics: { enabled: true, token: METRICS_TOKEN },
        webhook: { allowed_host_list: 'loopback', retry_base_delay: 3600, poll_interval: 0.2 },
      },
    });
    // A receiver that is gone: every delivery fails and waits an hour for its retry.
    const gone = await startHookReceiver();
    deadUrl = gone.url;
    await gone.close();
  });
  afterAll(async () => {
    await forge.close();
  });

  const scrape = (authorization?: string) =>
    fetch(`${forge.url}/metrics`, { headers: authorization ? { authorization } : {} });
  const outboxDepth = async () => {
    const text = await (await scrape(`Bearer ${METRICS_TOKEN}`)).text();
    return Number(/^forge_webhook_outbox_depth (\d+)$/m.exec(text)?.[1] ?? Number.NaN);
  };
  const until = async (condition: () => Promise<boolean>, what: string) => {
    for (let i = 0; i < 800; i += 1) {
      if (await condition()) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`timed out waiting for ${what}`);
  };
  /** Waits until the hook's deliveries are `count` failed first attempts waiting for their retry. */
  const waitForPending = async (hooksPath: string, token: string, count: number) =>
    until(async () => {
      const list = await forge.request('GET', `${hooksPath}/deliveries`, { token });
      const rows = list.body as Array<{ state: string; attempts: number }>;
      return rows.length === count && rows.every((d) => d.state === 'pending' && d.attempts === 1);
    }, `${count} pending deliveries`);
  const deadHook = (events: string[]) => ({
    type: 'gitea',
    config: { url: deadUrl, content_type: 'json' },
    events,
    active: true,
  });

  it('serves /metrics as Gitea does: only to a scraper with the bearer token', async () => {
    for (const authorization of [
      undefined,
      `Bearer ${METRICS_TOKEN}x`,
      `token ${METRICS_TOKEN}`,
      METRICS_TOKEN,
    ]) {
      const refused = await scrape(authorization);
      expect(refused.status, String(authorization)).toBe(401);
      expect(await refused.text()).toBe('');
    }
    const scraped = await scrape(`Bearer ${METRICS_TOKEN}`);
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await scraped.text();
    expect(text).toContain('# TYPE forge_webhook_delivery_attempts_total counter');
    expect(text).toContain('# TYPE forge_webhook_delivery_duration_seconds histogram');
    expect(text).toMatch(/^forge_webhook_outbox_depth \d+$/m);
    expect(text).toMatch(/^forge_process_cpu_user_seconds_total /m);
  });

  it('deleting a user deletes its hooks and their pending deliveries', async () => {
    const user = await forge.createUser();
    const token = await forge.createToken(user, ['write:user', 'write:repository']);
    const hook = await forge.request('POST', '/user/hooks', { token, body: deadHook(['repository']) });
    expect(hook.status).toBe(201);
    const repo = uniqueName('repo');
    expect((await forge.request('POST', '/user/repos', { token, body: { name: repo } })).status).toBe(201);
    expect((await forge.request('DELETE', `/repos/${user.username}/${repo}`, { token })).status).toBe(204);
    await waitForPending(`/user/hooks/${hook.body.id}`, token, 2);
    await until(async () => (await outboxDepth()) === 2, 'an outbox depth of 2');

    const deleted = await forge.request('DELETE', `/admin/users/${user.username}`, {
      token: forge.admin.token,
    });
    expect(deleted.status).toBe(204);
    await until(async () => (await outboxDepth()) === 0, 'an empty outbox');
    const metrics = await (await scrape(`Bearer ${METRICS_TOKEN}`)).text();
    // Removed, not dropped by the worker: no attempt was counted for them after the deletion.
    expect(metrics).not.toMatch(/^forge_webhook_delivery_attempts_total\{outcome="dropped"\}/m);
  });

  it('DELETE /orgs/{org}: owners only, refused while it owns repositories, and its hooks go with it', async () => {
    const owner = await forge.createUser();
    const token = await forge.createToken(owner, ['write:organization', 'write:repository']);
    const stranger = await forge.createUser();
    const strangerToken = await forge.createToken(stranger, ['write:organization']);
    const org = await forge.createOrg(token, {});
    const hook = await forge.request('POST', `/orgs/${org.name}/hooks`, {
      token,
      body: deadHook(['repository']),
    });
    expect(hook.status).toBe(201);
    const repo = uniqueName('repo');
    expect(
      (await forge.request('POST', `/orgs/${org.name}/repos`, { token, body: { name: repo } })).status,
    ).toBe(201);

    const anonymous = await forge.request('DELETE', `/orgs/${org.name}`);
    expect(anonymous.status).toBe(401);
    const readOnly = await forge.createToken(owner, ['read:organization']);
    const notWritable = await forge.request('DELETE', `/orgs/${org.name}`, { token: readOnly });
    expect(notWritable.status).toBe(403);
    expect(notWritable.body.message).toMatch(/^token does not have at least one of required scope\(s\)/);
    const notOwner = await forge.request('DELETE', `/orgs/${org.name}`, { token: strangerToken });
    expect(notOwner.status).toBe(403);
    expect(notOwner.body).toMatchObject({ message: 'Must be an organization owner' });
    const owning = await forge.request('DELETE', `/orgs/${org.name}`, { token });
    expect(owning.status).toBe(422);
    expect(owning.body).toEqual({
      message: `user still has ownership of repositories [uid: ${org.id}]`,
      url: `${forge.appUrl}api/swagger`,
    });
    expect((await forge.request('GET', `/orgs/${org.name}/hooks/${hook.body.id}`, { token })).status).toBe(
      200,
    );

    expect((await forge.request('DELETE', `/repos/${org.name}/${repo}`, { token })).status).toBe(204);
    await waitForPending(`/orgs/${org.name}/hooks/${hook.body.id}`, token, 2);
    await until(async () => (await outboxDepth()) === 2, 'an outbox depth of 2');

    expect((await forge.request('DELETE', `/orgs/${org.name}`, { token })).status).toBe(204);
    expect((await forge.request('GET', `/orgs/${org.name}`, { token })).status).toBe(404);
    await until(async () => (await outboxDepth()) === 0, 'an empty outbox');
    expect((await forge.request('DELETE', `/orgs/${org.name}`, { token })).status).toBe(404);
  });
});
