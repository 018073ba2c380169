import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repositoryPath } from '../src/git/repository.js';
import { startTestForge, type TestForge, type TestUser } from './harness.js';
import { createRepo, type TestRepo } from './repo-fixtures.js';

/** What real `git archive` writes for a commit, to compare downloads with byte for byte. */
function gitArchive(forge: TestForge, repo: TestRepo, format: 'zip' | 'tar.gz', commit: string): Buffer {
  const gitDir = repositoryPath(join(forge.ctx.config.dataDir, 'repositories'), repo.owner, repo.name);
  return execFileSync('git', [
    '--git-dir',
    gitDir,
    'archive',
    `--format=${format}`,
    `--prefix=${repo.name.toLowerCase()}/`,
    commit,
  ]);
}

async function download(url: string, token?: string) {
  const res = await fetch(url, { headers: token ? { authorization: `token ${token}` } : {} });
  return { res, bytes: Buffer.from(await res.arrayBuffer()) };
}

/** Archives at `/{owner}/{repo}/archive/{ref}.{zip,tar.gz}` and `GET /repos/{o}/{r}/archive/{archive}`. */
describe('archives', () => {
  let forge: TestForge;
  let owner: TestUser;
  let token: string;
  let repo: TestRepo;
  let release: { tarball_url: string; zipball_url: string };
  let head: string;

  beforeAll(async () => {
    forge = await startTestForge();
    owner = await forge.createUser();
    token = await forge.createToken(owner, ['write:repository', 'write:user']);
    repo = await createRepo(forge, token, { name: 'Demo-Repo' });
    release = (await forge.request('POST', `${repo.path}/releases`, { token, body: { tag_name: 'v1.0' } }))
      .body;
    head = (await forge.request('GET', `${repo.path}/branches/${repo.default_branch}`)).body.commit.id;
  });
  afterAll(() => forge.close());

  it("a release's tarball_url and zipball_url stream exactly what git archive writes", async () => {
    const tar = await download(release.tarball_url);
    expect(tar.res.status).toBe(200);
    expect(tar.res.headers.get('content-type')).toBe('application/octet-stream');
    expect(tar.res.headers.get('content-disposition')).toBe('attachment; filename="Demo-Repo-v1.0.tar.gz"');
    expect(tar.res.headers.get('etag')).toBe(`"${head}"`);
    expect(tar.bytes.equals(gitArchive(forge, repo, 'tar.gz', head))).toBe(true);
    const zip = await download(release.zipball_url);
    expect(zip.res.status).toBe(200);
    expect(zip.res.headers.get('content-disposition')).toBe('attachment; filename="Demo-Repo-v1.0.zip"');
    expect(zip.bytes.equals(gitArchive(forge, repo, 'zip', head))).toBe(true);

    const dir = mkdtempSync(join(tmpdir(), 'forge-archive-'));
    try {
      writeFileSync(join(dir, 'a.tar.gz'), tar.bytes);
      expect(
        execFileSync('tar', ['-tzf', join(dir, 'a.tar.gz')])
          .toString()
          .split('\n'),
      ).toContain('demo-repo/README.md');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('GET /api/v1/repos/{o}/{r}/archive/{archive}: branches, tags and commit ids', async () => {
    const api = `${forge.url}/api/v1${repo.path}/archive`;
    const branch = await download(`${api}/${repo.default_branch}.zip`);
    expect(branch.res.status).toBe(200);
    expect(branch.bytes.equals(gitArchive(forge, repo, 'zip', head))).toBe(true);
    const bySha = await download(`${api}/${head}.tar.gz`);
    expect(bySha.res.status).toBe(200);
    expect(bySha.res.headers.get('content-disposition')).toBe(
      `attachment; filename="Demo-Repo-${head}.tar.gz"`,
    );
    expect(bySha.bytes.equals(gitArchive(forge, repo, 'tar.gz', head))).toBe(true);
  });

  it('unknown refs are 404, unknown formats 400, and option-like refs never reach git', async () => {
    const api = `/repos/${repo.owner}/${repo.name}/archive`;
    const missing = await forge.request('GET', `${api}/nope.zip`);
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe('unrecognized repository reference: nope');
    const format = await forge.request('GET', `${api}/main.rar`);
    expect(format.status).toBe(400);
    expect(format.body).toEqual({ message: 'unknown format: main.rar', url: `${forge.appUrl}api/swagger` });
    const cwdBefore = readdirSync(process.cwd());
    for (const ref of ['--output=pwned.zip', '-o', '--remote=x', '..', 'main:README.md']) {
      const res = await fetch(
        `${forge.url}/${repo.owner}/${repo.name}/archive/${encodeURIComponent(ref)}.zip`,
      );
      expect(res.status).toBe(404);
    }
    expect(readdirSync(process.cwd())).toEqual(cwdBefore);
    expect((await fetch(`${forge.url}/${repo.owner}/${repo.name}/archive/nope.tar.gz`)).status).toBe(404);
  });

  it("private repositories: 404 to anonymous callers and strangers on both routes, the owner's token works", async () => {
    const hidden = await createRepo(forge, token, { private: true });
    const web = `${forge.url}/${hidden.owner}/${hidden.name}/archive/${hidden.default_branch}.tar.gz`;
    const api = `${forge.url}/api/v1${hidden.path}/archive/${hidden.default_branch}.tar.gz`;
    const stranger = await forge.createToken(await forge.createUser(), ['read:repository']);
    for (const url of [web, api]) {
      expect((await fetch(url)).status).toBe(404);
      expect((await download(url, stranger)).res.status).toBe(404);
      expect((await download(url, token)).res.status).toBe(200);
    }
    const weak = await forge.createToken(owner, ['read:user']);
    expect((await download(api, weak)).res.status).toBe(403);
  });
});
