/**
 * The key check answers from a cache kept under the database's change stamp (access/key-cache.ts). These
 * tests warm that cache with many requests of a key, then change the key behind the server's back — by
 * `DELETE /keys/{name}`, by `machine-api keys revoke` in another process, by a scope changed in the
 * database by another connection — and require the very next request to see the change. A cache that
 * ignored the stamp would answer 200 from what it kept.
 */

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKeysCommand } from '../src/keys-command.js';
import { type MachineApiUnderTest, startMachineApi } from './harness.js';

const cliPath = new URL('../bin/machine-api.js', import.meta.url).pathname;

async function createKey(dataDir: string, name: string, scope: string): Promise<string> {
  let out = '';
  const code = await runKeysCommand(['create'], { dataDir, name, scope, out: (text) => (out += text) });
  expect(code).toBe(0);
  return out.split('\n')[0] ?? '';
}

describe('the key cache never outlives a change of the key', () => {
  let api: MachineApiUnderTest;
  let admin: string;

  beforeAll(async () => {
    api = await startMachineApi('[server]\nauth = "keys"\n\n[machines.sim]\ntype = "Noop"\n');
    admin = await createKey(api.dataDir, 'admin', 'admin');
  });

  afterAll(async () => {
    await api?.close();
  });

  const status = async (path: string, key: string) =>
    (await fetch(`${api.baseUrl}${path}`, { headers: { 'x-api-key': key } })).status;

  /** Many requests with the key, some at once, so its answer is kept (and kept again) before the change. */
  async function warm(key: string, path = '/machines'): Promise<void> {
    for (let round = 0; round < 5; round++) {
      const statuses = await Promise.all(Array.from({ length: 8 }, () => status(path, key)));
      expect(statuses).toEqual(Array(8).fill(200));
    }
  }

  it('refuses a key revoked over HTTP at the very next request', async () => {
    const key = await createKey(api.dataDir, 'via-http', 'read');
    await warm(key);
    const revoked = await fetch(`${api.baseUrl}/keys/via-http`, {
      method: 'DELETE',
      headers: { 'x-api-key': admin },
    });
    expect(revoked.status).toBe(204);
    const next = await fetch(`${api.baseUrl}/machines`, { headers: { 'x-api-key': key } });
    expect(next.status).toBe(401);
    expect(await next.json()).toMatchObject({
      error_code: 'Unauthorized',
      message: 'the API key is not valid (unknown or revoked)',
    });
  });

  it('refuses a key revoked by `machine-api keys revoke` in another process at the very next request', async () => {
    const key = await createKey(api.dataDir, 'via-cli', 'read');
    await warm(key);
    const { stdout } = await promisify(execFile)(process.execPath, [
      cliPath,
      'keys',
      'revoke',
      'via-cli',
      '--data-dir',
      api.dataDir,
    ]);
    expect(stdout).toBe('revoked "via-cli"\n');
    expect(await status('/machines', key)).toBe(401);
  });

  it('applies a scope changed in the database by another connection at the very next request', async () => {
    const key = await createKey(api.dataDir, 'rescoped', 'read,print');
    await warm(key, '/jobs');
    // A narrower scope written by another connection (as an operator's tool, or another instance, would).
    const other = new Database(join(api.dataDir, 'machine-api.sqlite'));
    try {
      other.prepare("UPDATE api_keys SET scopes = 'print' WHERE name = 'rescoped'").run();
    } finally {
      other.close();
    }
    const next = await fetch(`${api.baseUrl}/jobs`, { headers: { 'x-api-key': key } });
    expect(next.status).toBe(403);
    expect(await next.json()).toMatchObject({
      error_code: 'MissingScope',
      message: 'the API key "rescoped" lacks the "read" scope needed for GET /jobs',
    });
  });
});
