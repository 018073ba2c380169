// Read-after-write over HTTP with readers racing the writes (issue 35), on one forge: every read sent
// after a write's answer arrived reflects the write, for every kind of credential and of change
// (test/freshness-matrix.ts). With caches off every answer is built from the rows, so the uncached
// path is left to the forge-nocache project's suites; on PostgreSQL this runs on two processes sharing
// one database (test/postgres/fresh-reads.test.ts).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe } from 'vitest';
import { defineFreshnessMatrix, type FreshnessTarget } from './freshness-matrix.js';
import { startTestForge, type TestForge } from './harness.js';
import { testingPostgres } from './test-database.js';

let forge: TestForge;
let target: FreshnessTarget;

// The two-process PostgreSQL run covers that store; here SQLite, the embedded default.
describe.runIf(!testingPostgres())('one forge on SQLite', () => {
  beforeAll(async () => {
    forge = await startTestForge();
    target = {
      urls: [forge.url],
      admin: { username: forge.admin.username, password: forge.admin.password, token: forge.admin.token },
      dir: await mkdtemp(join(tmpdir(), 'forge-fresh-reads-')),
    };
  }, 60_000);
  afterAll(async () => {
    await forge?.close();
    if (target) await rm(target.dir, { recursive: true, force: true });
  });

  defineFreshnessMatrix('SQLite', () => target);
});
