import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/api/app.js';

describe('GET /api/v1/version', () => {
  let app: Awaited<ReturnType<typeof buildApp>>;
  let base: string;
  beforeAll(async () => {
    app = await buildApp({ logger: pino({ level: 'silent' }) });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => app.close());

  it('reports a Gitea-compatible version', async () => {
    const res = await fetch(`${base}/api/v1/version`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
  });
});
