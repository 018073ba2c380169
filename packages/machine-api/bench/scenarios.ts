import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Scenario } from '../../../bench/scenario.js';
import { startService } from '../../../bench/service-process.js';
import { slicingScenario } from './slicing.js';

const cli = new URL('../dist/cli.js', import.meta.url).pathname;

/** Starts machine-api on a throw-away config and data dir. */
async function startMachineApi(configToml: string) {
  const dir = mkdtempSync(join(tmpdir(), 'machine-api-bench-'));
  writeFileSync(join(dir, 'machine-api.toml'), configToml);
  const service = await startService(
    cli,
    ['--config', join(dir, 'machine-api.toml'), '--data-dir', dir],
    '/ping',
  );
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
    name: 'machine-api GET /ping',
    async prepare() {
      const service = await startMachineApi('');
      return { baseUrl: service.baseUrl, request: { path: '/ping' }, teardown: service.stop };
    },
  },
  slicingScenario(startMachineApi),
];
