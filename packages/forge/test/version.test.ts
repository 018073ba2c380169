import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestForge, type TestForge } from './harness.js';

describe('server information', () => {
  let forge: TestForge;
  beforeAll(async () => {
    forge = await startTestForge();
  });
  afterAll(() => forge.close());

  it('GET /version reports the Gitea API version this forge speaks', async () => {
    const res = await forge.request('GET', '/version');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ version: '1.23.0' });
  });

  it('GET /settings/api reports the paging defaults 30/50', async () => {
    const res = await forge.request('GET', '/settings/api');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      max_response_items: 50,
      default_paging_num: 30,
      default_git_trees_per_page: 1000,
      default_max_blob_size: 10485760,
    });
  });

  it("unknown API routes answer 404 with Gitea's not-found body", async () => {
    const res = await forge.request('GET', '/no/such/route');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      errors: null,
      message: "The target couldn't be found.",
      url: `${forge.appUrl}api/swagger`,
    });
  });
});
