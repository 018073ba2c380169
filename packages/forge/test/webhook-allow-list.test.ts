// Server-side request forgery: under the default `external` allow-list a hook can reach neither
// 127.0.0.1, nor a name resolving to it (localhost), nor a loopback address through a redirect from an
// allowed server. The list is checked on the address actually connected to; redirects are never followed.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { branchFilterMatches, compileGlob } from '../src/webhooks/glob.js';
import { parseHostAllowList } from '../src/webhooks/host-allow-list.js';
import { startTestForge, type TestForge } from './harness.js';
import { type HookReceiver, startHookReceiver } from './hook-receiver.js';
import { createRepo } from './repo-fixtures.js';

describe('allowed_host_list as Gitea reads it', () => {
  it('external allows public unicast addresses only', () => {
    const list = parseHostAllowList('external');
    for (const ip of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111'])
      expect(list.allows('h', ip), ip).toBe(true);
    for (const ip of [
      '127.0.0.1',
      '127.5.5.5',
      '::1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      'fc00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '224.0.0.1',
    ]) {
      expect(list.allows('h', ip), ip).toBe(false);
    }
  });

  it('loopback, private, *, CIDRs and host globs', () => {
    expect(parseHostAllowList('loopback').allows('x', '127.0.0.1')).toBe(true);
    expect(parseHostAllowList('loopback').allows('x', '10.0.0.1')).toBe(false);
    expect(parseHostAllowList('private').allows('x', '192.168.0.9')).toBe(true);
    expect(parseHostAllowList('private').allows('x', '127.0.0.1')).toBe(false);
    expect(parseHostAllowList('*').allows('x', '127.0.0.1')).toBe(true);
    const mixed = parseHostAllowList('external, 10.0.0.0/8, *.internal.example');
    expect(mixed.allows('x', '10.9.9.9')).toBe(true);
    expect(mixed.allows('ci.internal.example', '172.16.0.5')).toBe(true);
    expect(mixed.allows('internal.example', '172.16.0.5')).toBe(false);
    expect(() => parseHostAllowList('10.0.0.0/99')).toThrow(/not a valid CIDR/);
  });

  it('branch filters are gobwas globs over the short and the full ref', () => {
    expect(branchFilterMatches('', 'refs/heads/x')).toBe(true);
    expect(branchFilterMatches('*', 'refs/tags/v1')).toBe(true);
    expect(branchFilterMatches('main', 'refs/heads/main')).toBe(true);
    expect(branchFilterMatches('main', 'refs/tags/main')).toBe(false);
    expect(branchFilterMatches('{main,release/*}', 'refs/heads/release/1.0')).toBe(true);
    expect(branchFilterMatches('feature/*', 'refs/heads/feature/a/b')).toBe(true);
    expect(branchFilterMatches('{refs/heads/feature/*,refs/tags/release/*}', 'refs/tags/release/2')).toBe(
      true,
    );
    expect(branchFilterMatches('v[0-9]', 'refs/heads/v7')).toBe(true);
    expect(branchFilterMatches('v[!0-9]', 'refs/heads/v7')).toBe(false);
    expect(compileGlob('{a,b')).toBeNull();
    expect(compileGlob('[abc')).toBeNull();
  });
});

describe('deliveries under the default external allow-list', () => {
  let forge: TestForge;
  let token: string;
  let receiver: HookReceiver;
  let redirector: Server;
  let redirectUrl: string;

  beforeAll(async () => {
    receiver = await startHookReceiver();
    // An allowed server (named in the list by its own address) that redirects to the loopback receiver.
    redirector = createServer((_request, response) => {
      response.writeHead(302, { location: receiver.url });
      response.end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.2', resolve));
    redirectUrl = `http://127.0.0.2:${(redirector.address() as AddressInfo).port}/hook`;
    forge = await startTestForge({
      config: { webhook: { allowed_host_list: 'external,127.0.0.2/32', poll_interval: 0.2 } },
    });
    const user = await forge.createUser();
    token = await forge.createToken(user, ['write:repository', 'write:user']);
  });
  afterAll(async () => {
    await forge.close();
    await receiver.close();
    await new Promise<void>((resolve) => redirector.close(() => resolve()));
  });

  const settled = async (path: string, hookId: number) => {
    for (let i = 0; i < 400; i += 1) {
      const list = await forge.request('GET', `${path}/hooks/${hookId}/deliveries`, { token });
      const [delivery] = list.body as Array<{ state: string }>;
      if (delivery && delivery.state !== 'pending' && delivery.state !== 'delivering') return delivery;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error('delivery did not settle');
  };

  it('refuses 127.0.0.1, localhost and a redirect to loopback, without retrying', async () => {
    const port = receiver.port;
    const cases: Array<[string, string | RegExp, number]> = [
      [`http://127.0.0.1:${port}/hook`, "deny '127.0.0.1(127.0.0.1)'", 0],
      [`http://localhost:${port}/hook`, /deny 'localhost\((127\.0\.0\.1|::1)\)'/, 0],
      [redirectUrl, 'HTTP 302', 302],
    ];
    for (const [url, reason, status] of cases) {
      const repo = await createRepo(forge, token);
      const hook = await forge.request('POST', `${repo.path}/hooks`, {
        token,
        body: { type: 'gitea', config: { url, content_type: 'json' }, events: ['release'], active: true },
      });
      expect(hook.status).toBe(201);
      await forge.request('POST', `${repo.path}/releases`, { token, body: { tag_name: 'v1' } });
      const delivery = (await settled(repo.path, hook.body.id)) as {
        state: string;
        status: string;
        status_code: number;
        attempts: number;
      };
      expect(delivery.state, url).toBe('failed');
      expect(delivery.attempts, url).toBe(1);
      expect(delivery.status_code, url).toBe(status);
      if (typeof reason === 'string') expect(delivery.status, url).toContain(reason);
      else expect(delivery.status, url).toMatch(reason);
    }
    expect(receiver.received).toEqual([]);
  });
});
