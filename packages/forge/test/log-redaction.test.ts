// Credentials never reach the log, at any level: query tokens, Authorization, Sudo (issue 21, defect 5).
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redactingLogger, redactUrl } from '../src/log.js';
import { startTestForge, type TestForge, type TestUser } from './harness.js';

/** A pino logger at `trace` whose lines are kept in memory. */
function capturingLogger() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: pino({ level: 'trace' }, stream), lines };
}

describe('log redaction', () => {
  let forge: TestForge;
  let user: TestUser;
  let token: string;
  const captured = capturingLogger();

  beforeAll(async () => {
    forge = await startTestForge({ logger: captured.logger });
    user = await forge.createUser();
    token = await forge.createToken(user, ['read:user']);
  });
  afterAll(() => forge.close());

  it('request lines at debug level carry no ?token=, ?access_token= or ?sudo= values', async () => {
    expect((await forge.request('GET', `/version?token=${token}`)).status).toBe(200);
    expect((await forge.request('GET', `/user?access_token=${token}&x=1`)).status).toBe(200);
    expect((await forge.request('GET', `/user?token=not-a-real-token-0123`)).status).toBe(401);
    const sudo = await forge.request('GET', `/user?sudo=${user.username}&token=${forge.admin.token}`);
    expect(sudo.status).toBe(200);
    const log = captured.lines.join('\n');
    expect(log).not.toContain(token);
    expect(log).not.toContain(forge.admin.token);
    expect(log).not.toContain('not-a-real-token-0123');
    expect(log).not.toContain(`sudo=${user.username}`);
    const urls = captured.lines.map((line) => JSON.parse(line).url).filter(Boolean);
    expect(urls).toContain('/api/v1/version?token=[REDACTED]');
    expect(urls).toContain('/api/v1/user?access_token=[REDACTED]&x=1');
    expect(urls).toContain('/api/v1/user?sudo=[REDACTED]&token=[REDACTED]');
  });

  it('Authorization, Sudo and Cookie headers are censored wherever a logged object carries them', () => {
    const { logger, lines } = capturingLogger();
    const log = redactingLogger(logger);
    const headers = {
      authorization: 'token s3cr3t-header-token',
      sudo: 'someone-else',
      cookie: 'session=s3cr3t-cookie',
      'x-ssh-certificate': 's3cr3t-cert',
      accept: 'application/json',
    };
    for (const level of ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const) {
      log[level]({ req: { url: '/api/v1/user?token=s3cr3t-query', headers } }, 'request');
      log[level]({ headers, url: '/x?access_token=s3cr3t-query' }, 'headers');
    }
    expect(lines).toHaveLength(12);
    const text = lines.join('\n');
    for (const secret of [
      's3cr3t-header-token',
      'someone-else',
      's3cr3t-cookie',
      's3cr3t-cert',
      's3cr3t-query',
    ]) {
      expect(text).not.toContain(secret);
    }
    expect(JSON.parse(lines[0]!).req.headers).toEqual({
      authorization: '[REDACTED]',
      sudo: '[REDACTED]',
      cookie: '[REDACTED]',
      'x-ssh-certificate': '[REDACTED]',
      accept: 'application/json',
    });
  });

  it('redactUrl keeps everything but the credential values', () => {
    expect(redactUrl('/a?page=2&token=abc&limit=1#f')).toBe('/a?page=2&token=[REDACTED]&limit=1#f');
    expect(redactUrl('/a?Access_Token=abc')).toBe('/a?Access_Token=[REDACTED]');
    expect(redactUrl('/a?mytoken=abc')).toBe('/a?mytoken=abc');
  });
});
