import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Scenario } from '../../../bench/scenario.js';
import { startService } from '../../../bench/service-process.js';
import { openDatabase } from '../src/store/database.js';
import { insertRelease } from '../src/store/releases.js';
import { insertRepository } from '../src/store/repositories.js';
import { insertUser } from '../src/store/users.js';
import { scaleOutScenarios } from './scale-out-scenarios.js';

const cli = new URL('../dist/cli.js', import.meta.url).pathname;

/** Starts forge on a throw-away data dir, after `seed` filled its database. */
async function startForge(seed?: (dir: string) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), 'forge-bench-'));
  await seed?.(dir);
  const service = await startService(cli, ['--data-dir', dir], '/api/v1/version');
  return {
    baseUrl: service.baseUrl,
    stop: async () => {
      await service.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const RELEASES = 10_000;

/**
 * Seeds, through the store, a public repository `bench/big` with 10 000 records: mostly published
 * releases, every 10th a draft, every 7th a prerelease, every 50th a tag-only record.
 */
export async function seedReleases(
  dir: string,
  databaseUrl = `sqlite:${join(dir, 'forge.db')}`,
): Promise<void> {
  const forge = await openDatabase({ url: databaseUrl });
  try {
    const now = Math.floor(Date.now() / 1000);
    const user = await insertUser(forge.db, {
      lower_name: 'bench',
      name: 'bench',
      email: 'bench@example.com',
      is_active: 1,
      created_unix: now,
      updated_unix: now,
    });
    const repo = await insertRepository(forge.db, {
      owner: user,
      name: 'big',
      description: 'release list benchmark',
      website: '',
      isPrivate: false,
      defaultBranch: 'main',
      now,
    });
    await forge.db.transaction().execute(async (trx) => {
      for (let i = 0; i < RELEASES; i++) {
        await insertRelease(trx, {
          repoId: repo.id,
          publisherId: user.id,
          tagName: `v1.${i}`,
          target: 'main',
          title: `Release 1.${i}`,
          note: `Notes for release 1.${i}: fixes and improvements.`,
          sha1: '0123456789abcdef0123456789abcdef01234567',
          numCommits: i + 1,
          isDraft: i % 10 === 3,
          isPrerelease: i % 7 === 5,
          isTag: i % 50 === 49,
          createdUnix: now - RELEASES + i,
        });
      }
    });
  } finally {
    await forge.close();
  }
}

export const scenarios: Scenario[] = [
  {
    name: 'forge GET /api/v1/version',
    async prepare() {
      const service = await startForge();
      return { baseUrl: service.baseUrl, request: { path: '/api/v1/version' }, teardown: service.stop };
    },
  },
  {
    name: 'forge GET /repos/{o}/{r}/releases?limit=50 (10 000 releases)',
    async prepare() {
      const service = await startForge(seedReleases);
      return {
        baseUrl: service.baseUrl,
        request: { path: '/api/v1/repos/bench/big/releases?limit=50' },
        notes: { releases: RELEASES, pageSize: 50 },
        teardown: service.stop,
      };
    },
  },
  {
    name: 'forge GET /repos/{o}/{r}/releases/latest (10 000 releases)',
    async prepare() {
      const service = await startForge(seedReleases);
      return {
        baseUrl: service.baseUrl,
        request: { path: '/api/v1/repos/bench/big/releases/latest' },
        notes: { releases: RELEASES },
        teardown: service.stop,
      };
    },
  },
  ...scaleOutScenarios(seedReleases),
];
