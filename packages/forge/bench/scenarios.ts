import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Scenario } from '../../../bench/scenario.js';
import { startService } from '../../../bench/service-process.js';

const cli = new URL('../dist/cli.js', import.meta.url).pathname;

/** Starts forge on a throw-away data dir. */
async function startForge() {
  const dir = mkdtempSync(join(tmpdir(), 'forge-bench-'));
  const service = await startService(cli, ['--data-dir', dir], '/api/v1/version');
  return {
    baseUrl: service.baseUrl,
    stop: async () => {
      await service.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const scenarios: Scenario[] = [
  {
    name: 'forge GET /api/v1/version',
    async prepare() {
      const service = await startForge();
      return { baseUrl: service.baseUrl, request: { path: '/api/v1/version' }, teardown: service.stop };
    },
  },
];
