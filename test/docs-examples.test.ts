// Every `sh` example of README.md and docs/ runs as written against the services as `npm start` runs them
// (built, example config, `./data/` data dirs), in a temporary checkout on free ports. Needs `npm run build`.
//
// One forge serves every page (each page makes its own users and repositories); each page that talks to
// machine-api gets a fresh one, since printing leaves a machine busy for the next page.
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { examplePages, pageScript } from '../scripts/docs/examples.js';
import {
  createCheckout,
  dataDirs,
  repoRoot,
  type StartedService,
  startService,
} from '../scripts/docs/services.js';

const pages = examplePages(repoRoot);
const checkout = createCheckout();
let forge: StartedService | undefined;

beforeAll(async () => {
  for (const cli of ['packages/machine-api/dist/cli.js', 'packages/forge/dist/cli.js']) {
    if (!existsSync(join(repoRoot, cli))) throw new Error(`${cli} is missing: run \`npm run build\` first`);
  }
  for (const tool of ['curl', 'jq', 'git', 'ssh-keygen']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) {
      throw new Error(`${tool} is missing: apt-get install curl jq git openssh-client`);
    }
  }
  forge = await startService(checkout.root, 'forge');
});

afterAll(async () => {
  await forge?.stop();
  checkout.remove();
});

describe('docs examples', () => {
  it('finds the runnable examples of the README and of docs/', () => {
    expect(pages.map((page) => page.path)).toContain('README.md');
    expect(pages.length).toBeGreaterThan(10);
  });

  for (const page of pages) {
    it(`${page.path}: every sh block runs`, { timeout: 120_000 }, async () => {
      let machineApi: StartedService | undefined;
      if (page.services.includes('machineApi')) {
        rmSync(join(checkout.root, dataDirs.machineApi), { recursive: true, force: true });
        machineApi = await startService(checkout.root, 'machineApi');
      }
      try {
        const script = pageScript(page, { forge: forge?.address, machineApi: machineApi?.address });
        const run = spawnSync('bash', ['-c', script], {
          cwd: checkout.root,
          encoding: 'utf8',
          timeout: 90_000,
          env: { PATH: process.env.PATH, HOME: checkout.root, LANG: 'C.UTF-8' },
        });
        expect(run.status, `${page.path} failed:\n${run.stdout}\n${run.stderr}`).toBe(0);
      } finally {
        await machineApi?.stop();
      }
    });
  }
});
