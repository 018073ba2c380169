import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/server/app.js';

describe('GET /ping', () => {
  let app: Awaited<ReturnType<typeof buildApp>>;
  let base: string;
  beforeAll(async () => {
    app = await buildApp({ logger: pino({ level: 'silent' }) });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => app.close());

  it('answers pong over real HTTP', async () => {
    const res = await fetch(`${base}/ping`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ message: 'pong' });
  });
});
