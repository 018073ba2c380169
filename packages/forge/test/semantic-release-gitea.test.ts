/**
 * The registry's `@saithodev/semantic-release-gitea` publish step, unchanged, against a forge: it
 * creates a draft release, uploads each asset as multipart `attachment` with `?name=`, then publishes.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { format } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestForge, type TestForge } from './harness.js';
import { cloneUrl, createRepo, type TestRepo } from './repo-fixtures.js';

interface Plugin {
  verifyConditions(config: object, context: object): Promise<void>;
  publish(config: object, context: object): Promise<{ url: string; name: string }>;
}
const plugin = createRequire(import.meta.url)('@saithodev/semantic-release-gitea') as Plugin;

/** The context semantic-release hands its publish plugins, for one release of `repo`. */
function releaseContext(forge: TestForge, repo: TestRepo, token: string, cwd: string, tag: string) {
  const logged: string[] = [];
  return {
    logged,
    context: {
      cwd,
      env: { GITEA_URL: forge.url, GITEA_TOKEN: token },
      options: { repositoryUrl: cloneUrl(forge, repo), publish: [] },
      branch: { name: repo.default_branch, type: 'release', main: true },
      nextRelease: { name: tag, gitTag: tag, version: tag.slice(1), notes: `notes of ${tag}` },
      logger: { log: (...args: unknown[]) => logged.push(format(...args)), error: () => {} },
    },
  };
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => entry.name);
}

describe('@saithodev/semantic-release-gitea publish with assets', () => {
  let forge: TestForge;
  let token: string;
  let work: string;
  const binary = randomBytes(150_000);
  const checksums = Buffer.from('abc123  app.bin\n');

  beforeAll(async () => {
    forge = await startTestForge();
    const owner = await forge.createUser();
    token = await forge.createToken(owner, ['write:repository', 'write:user']);
    work = await mkdtemp(join(tmpdir(), 'forge-semrel-'));
    await mkdir(join(work, 'dist'));
    await writeFile(join(work, 'dist', 'app.bin'), binary);
    await writeFile(join(work, 'CHECKSUMS'), checksums);
  });
  afterAll(async () => {
    await forge.close();
    await rm(work, { recursive: true, force: true });
  });

  it('publishes a release whose assets download byte for byte', async () => {
    const repo = await createRepo(forge, token);
    const config = { assets: ['dist/*.bin', { path: 'CHECKSUMS', name: 'checksums.txt' }] };
    const { context, logged } = releaseContext(forge, repo, token, work, 'v1.0.0');
    await plugin.verifyConditions(config, context);
    const result = await plugin.publish(config, context);

    const latest = await forge.request('GET', `${repo.path}/releases/latest`);
    expect(latest.status).toBe(200);
    expect(result.url).toBe(latest.body.url);
    expect(latest.body).toMatchObject({ tag_name: 'v1.0.0', draft: false, body: 'notes of v1.0.0' });
    const assets = latest.body.assets as { name: string; size: number; browser_download_url: string }[];
    expect(assets.map((a) => [a.name, a.size]).sort()).toEqual([
      ['app.bin', binary.length],
      ['checksums.txt', checksums.length],
    ]);
    for (const asset of assets) {
      const download = await fetch(asset.browser_download_url);
      expect(download.status).toBe(200);
      const bytes = Buffer.from(await download.arrayBuffer());
      expect(bytes.equals(asset.name === 'app.bin' ? binary : checksums)).toBe(true);
      expect(logged).toContain(`Published file ${asset.browser_download_url}`);
    }
    // The tag exists in git now that the release is published.
    const tag = await forge.request('GET', `${repo.path}/tags/v1.0.0`);
    expect(tag.status).toBe(200);
  });

  it('a refused upload fails the publish and leaves no file and no asset behind', async () => {
    const strict = await startTestForge({ config: { attachment: { allowed_types: '.txt' } } });
    try {
      const owner = await strict.createUser();
      const strictToken = await strict.createToken(owner, ['write:repository', 'write:user']);
      const repo = await createRepo(strict, strictToken);
      const config = { assets: ['dist/app.bin'] };
      const { context } = releaseContext(strict, repo, strictToken, work, 'v2.0.0');
      await plugin.verifyConditions(config, context);
      const failure = await plugin.publish(config, context).catch((error: unknown) => error);
      expect(failure).toMatchObject({ code: 'EGITEAAPIERROR' });
      // The plugin quotes the forge's error message to the user.
      expect(JSON.stringify(failure)).toContain(
        'This file cannot be uploaded or modified due to a forbidden file extension or type.',
      );
      // The client leaves its draft; the forge keeps nothing of the refused file.
      const drafts = await strict.request('GET', `${repo.path}/releases?draft=true`, { token: strictToken });
      expect(drafts.body).toHaveLength(1);
      expect(drafts.body[0].assets).toEqual([]);
      expect(await filesUnder(join(strict.ctx.config.dataDir, 'attachments'))).toEqual([]);
    } finally {
      await strict.close();
    }
  });
});
