import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { giteaApi } from 'gitea-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGit } from '../src/git/command.js';
import { startTestForge, type TestForge, type TestUser } from './harness.js';
import { cloneUrl, createRepo, scratchDir, type TestRepo } from './repo-fixtures.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');

/** Reading and writing files through the contents API (Gitea's repo/file.go). */
describe('contents API', () => {
  let forge: TestForge;
  let owner: TestUser;
  let token: string;
  let scratch: Awaited<ReturnType<typeof scratchDir>>;

  beforeAll(async () => {
    forge = await startTestForge();
    owner = await forge.createUser({ fullName: 'Ada Owner' });
    token = await forge.createToken(owner, ['write:repository', 'write:user']);
    scratch = await scratchDir();
  });
  afterAll(async () => {
    await scratch.cleanup();
    await forge.close();
  });

  const head = async (repo: TestRepo, branch = 'main') =>
    (await forge.request('GET', `${repo.path}/branches/${branch}`, { token })).body?.commit?.id as
      | string
      | undefined;

  describe('reads', () => {
    let repo: TestRepo;
    let readmeSha: string;
    beforeAll(async () => {
      repo = await createRepo(forge, token);
      const made = await forge.request('POST', `${repo.path}/contents`, {
        token,
        body: {
          files: [
            { operation: 'create', path: 'docs/guide.md', content: b64('# Guide\n') },
            {
              operation: 'create',
              path: 'bin/data.bin',
              content: Buffer.from([0, 1, 2, 255]).toString('base64'),
            },
          ],
          message: 'add docs',
        },
      });
      expect(made.status).toBe(201);
      readmeSha = (await forge.request('GET', `${repo.path}/contents/README.md`, { token })).body.sha;
    });

    it('a file: metadata, base64 content, last commit and links', async () => {
      const res = await forge.request('GET', `${repo.path}/contents/docs/guide.md?ref=main`, { token });
      expect(res.status).toBe(200);
      const api = `${forge.appUrl}api/v1${repo.path}`;
      const html = `${forge.appUrl}${repo.owner}/${repo.name}`;
      const commit = (await forge.request('GET', `${repo.path}/git/commits/main`, { token })).body;
      const sha = (
        await runGit(['rev-parse', 'main:docs/guide.md'], { gitDir: gitDirOf(repo) })
      ).stdout.trim();
      expect(res.body).toEqual({
        name: 'guide.md',
        path: 'docs/guide.md',
        sha,
        last_commit_sha: commit.sha,
        last_committer_date: commit.commit.committer.date,
        last_author_date: commit.commit.author.date,
        type: 'file',
        size: 8,
        encoding: 'base64',
        content: b64('# Guide\n'),
        target: null,
        url: `${api}/contents/docs/guide.md?ref=main`,
        html_url: `${html}/src/branch/main/docs/guide.md`,
        git_url: `${api}/git/blobs/${sha}`,
        download_url: `${html}/raw/branch/main/docs/guide.md`,
        submodule_git_url: null,
        _links: {
          self: `${api}/contents/docs/guide.md?ref=main`,
          git: `${api}/git/blobs/${sha}`,
          html: `${html}/src/branch/main/docs/guide.md`,
        },
      });
    });

    it('a directory and the root: lists without content; an unknown ref or path is 404', async () => {
      const root = await forge.request('GET', `${repo.path}/contents`, { token });
      expect(root.body.map((e: { path: string; type: string }) => [e.path, e.type])).toEqual([
        ['README.md', 'file'],
        ['bin', 'dir'],
        ['docs', 'dir'],
      ]);
      expect(root.body[0].content).toBeNull();
      expect(root.body[0].sha).toBe(readmeSha);
      const dir = await forge.request('GET', `${repo.path}/contents/docs`, { token });
      expect(dir.body.map((e: { name: string }) => e.name)).toEqual(['guide.md']);
      expect((await forge.request('GET', `${repo.path}/contents/README.md?ref=nope`, { token })).status).toBe(
        404,
      );
      expect((await forge.request('GET', `${repo.path}/contents/missing.md`, { token })).status).toBe(404);
      expect(
        (await forge.request('GET', `${repo.path}/contents/docs/../../etc/passwd`, { token })).status,
      ).toBe(404);
      expect((await forge.request('GET', `${repo.path}/contents/README.md%00.txt`, { token })).status).toBe(
        404,
      );
      const empty = await createRepo(forge, token, { autoInit: false });
      const emptyRoot = await forge.request('GET', `${empty.path}/contents`, { token });
      expect([emptyRoot.status, emptyRoot.body]).toEqual([200, []]);
    });

    it('raw and media: bytes with the ref in the path or the query, sniffed type, ETag; 404 for directories', async () => {
      const raw = await forge.request('GET', `${repo.path}/raw/main/docs/guide.md`, { token });
      expect(raw.status).toBe(200);
      expect(raw.text).toBe('# Guide\n');
      expect(raw.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(raw.headers.get('x-gitea-object-type')).toBe('file');
      const etag = raw.headers.get('etag')!;
      const byQuery = await forge.request('GET', `${repo.path}/raw/docs/guide.md?ref=main`, { token });
      expect(byQuery.text).toBe('# Guide\n');
      const byDefault = await forge.request('GET', `${repo.path}/media/docs/guide.md`, { token });
      expect(byDefault.text).toBe('# Guide\n');
      const binary = await fetch(`${forge.url}/api/v1${repo.path}/raw/bin/data.bin`, {
        headers: { Authorization: `token ${token}` },
      });
      expect(binary.headers.get('content-type')).toBe('application/octet-stream');
      expect(binary.headers.get('content-disposition')).toBe('attachment; filename="data.bin"');
      expect([...new Uint8Array(await binary.arrayBuffer())]).toEqual([0, 1, 2, 255]);
      const cached = await forge.request('GET', `${repo.path}/raw/main/docs/guide.md`, {
        token,
        headers: { 'If-None-Match': etag },
      });
      expect(cached.status).toBe(304);
      expect((await forge.request('GET', `${repo.path}/raw/main/docs`, { token })).status).toBe(404);
      expect((await forge.request('GET', `${repo.path}/raw/main/nothing`, { token })).status).toBe(404);
    });
  });

  describe('writes', () => {
    it('creates a file with gitea-js; git clone shows it with the doer as author and committer', async () => {
      const repo = await createRepo(forge, token);
      const client = giteaApi(forge.url, { token, customFetch: fetch });
      const created = await client.repos.repoCreateFile(repo.owner, repo.name, 'Formula/tool.rb', {
        content: b64('class Tool < Formula\nend\n'),
        message: 'Brew formula update for tool version v1.0.0',
      });
      expect(created.status).toBe(201);
      expect(created.data.content?.path).toBe('Formula/tool.rb');
      expect(created.data.commit?.message).toBe('Brew formula update for tool version v1.0.0\n');
      expect(created.data.commit?.author).toMatchObject({ name: 'Ada Owner', email: owner.email });
      expect(created.data.verification?.verified).toBe(false);
      const copy = join(scratch.dir, `clone-${repo.name}`);
      await runGit([
        'clone',
        '--quiet',
        cloneUrl(forge, repo, { user: owner.username, secret: token }),
        copy,
      ]);
      expect(await readFile(join(copy, 'Formula/tool.rb'), 'utf8')).toBe('class Tool < Formula\nend\n');
      const log = await runGit(['-C', copy, 'log', '-1', '--format=%an <%ae>|%cn <%ce>|%s']);
      expect(log.stdout.trim()).toBe(
        `Ada Owner <${owner.email}>|Ada Owner <${owner.email}>|Brew formula update for tool version v1.0.0`,
      );
      expect((await runGit(['-C', copy, 'rev-list', '--count', 'HEAD'])).stdout.trim()).toBe('2');
      // The commit is announced like a push: commit_repo activity by the doer.
      const feed = await forge.request(
        'GET',
        `/users/${owner.username}/activities/feeds?only-performed-by=true`,
        { token },
      );
      expect(feed.body[0]).toMatchObject({
        op_type: 'commit_repo',
        ref_name: 'refs/heads/main',
        act_user: { login: owner.username },
      });
    });

    it('update needs the current sha: a stale one is refused and changes nothing', async () => {
      const repo = await createRepo(forge, token);
      const first = await forge.request('POST', `${repo.path}/contents/app.yaml`, {
        token,
        body: { content: b64('v: 1\n') },
      });
      const oldSha = first.body.content.sha;
      const second = await forge.request('PUT', `${repo.path}/contents/app.yaml`, {
        token,
        body: { content: b64('v: 2\n'), sha: oldSha, author: { name: 'Bot', email: 'bot@example.com' } },
      });
      expect(second.status).toBe(200);
      expect(second.body.commit.author).toMatchObject({ name: 'Bot', email: 'bot@example.com' });
      expect(second.body.commit.committer).toMatchObject({ name: 'Bot', email: 'bot@example.com' });
      expect(second.body.commit.message).toBe('Update app.yaml\n');
      const before = await head(repo);
      const stale = await forge.request('PUT', `${repo.path}/contents/app.yaml`, {
        token,
        body: { content: b64('v: 3\n'), sha: oldSha },
      });
      expect(stale.status).toBe(422);
      expect(stale.body).toEqual({
        message: `sha does not match [given: ${oldSha}, expected: ${second.body.content.sha}]`,
        url: `${forge.appUrl}api/swagger`,
      });
      expect(await head(repo)).toBe(before);
      const raw = await forge.request('GET', `${repo.path}/raw/app.yaml`, { token });
      expect(raw.text).toBe('v: 2\n');
      const missing = await forge.request('PUT', `${repo.path}/contents/nothing.yaml`, {
        token,
        body: { content: b64('x'), sha: oldSha },
      });
      expect([missing.status, missing.body.message]).toEqual([
        404,
        'repository file does not exist [path: nothing.yaml]',
      ]);
      const exists = await forge.request('POST', `${repo.path}/contents/app.yaml`, {
        token,
        body: { content: b64('x') },
      });
      expect([exists.status, exists.body.message]).toEqual([
        422,
        'repository file already exists [path: app.yaml]',
      ]);
      const deleted = await forge.request('DELETE', `${repo.path}/contents/app.yaml`, {
        token,
        body: { sha: second.body.content.sha },
      });
      expect(deleted.status).toBe(200);
      expect(deleted.body.content).toBeNull();
      expect(deleted.body.commit.message).toBe('Delete app.yaml\n');
      expect((await forge.request('GET', `${repo.path}/contents/app.yaml`, { token })).status).toBe(404);
    });

    it('POST /contents: create, update, rename and delete in one commit; new_branch', async () => {
      const repo = await createRepo(forge, token);
      const readme = (await forge.request('GET', `${repo.path}/contents/README.md`, { token })).body.sha;
      const setup = await forge.request('POST', `${repo.path}/contents`, {
        token,
        body: {
          files: [
            { operation: 'create', path: 'old.txt', content: b64('old') },
            { operation: 'create', path: 'gone.txt', content: b64('bye') },
          ],
        },
      });
      const gone = setup.body.files[1].sha;
      const before = await head(repo);
      const res = await forge.request('POST', `${repo.path}/contents`, {
        token,
        body: {
          new_branch: 'feature/x',
          files: [
            { operation: 'create', path: 'new.txt', content: b64('new') },
            { operation: 'update', path: 'README.md', content: b64('# changed\n'), sha: readme },
            { operation: 'rename', path: 'moved/old.txt', from_path: 'old.txt' },
            { operation: 'delete', path: 'gone.txt', sha: gone },
          ],
        },
      });
      expect(res.status).toBe(201);
      expect(res.body.files.map((f: { path: string } | null) => f?.path ?? null)).toEqual([
        'new.txt',
        'README.md',
        'moved/old.txt',
        null,
      ]);
      expect(res.body.commit.message).toBe('Add new.txt\nUpdate README.md, moved/old.txt\nDelete gone.txt\n');
      expect(res.body.commit.parents.map((p: { sha: string }) => p.sha)).toEqual([before]);
      expect(await head(repo)).toBe(before);
      const tree = await forge.request('GET', `${repo.path}/contents?ref=feature/x`, { token });
      expect(tree.body.map((e: { path: string }) => e.path)).toEqual(['README.md', 'moved', 'new.txt']);
      const again = await forge.request('POST', `${repo.path}/contents/other.txt`, {
        token,
        body: { content: b64('x'), new_branch: 'feature/x' },
      });
      expect([again.status, again.body.message]).toEqual([422, 'branch already exists [name: feature/x]']);
      const noBranch = await forge.request('POST', `${repo.path}/contents/other.txt`, {
        token,
        body: { content: b64('x'), branch: 'nope' },
      });
      expect([noBranch.status, noBranch.body.message]).toEqual([404, 'branch does not exist [name: nope]']);
    });

    it('the first write to an empty repository makes its first commit', async () => {
      const repo = await createRepo(forge, token, { autoInit: false });
      const res = await forge.request('POST', `${repo.path}/contents/hello.txt`, {
        token,
        body: { content: b64('hi') },
      });
      expect(res.status).toBe(201);
      expect(res.body.commit.parents).toEqual([]);
      const info = await forge.request('GET', repo.path, { token });
      expect(info.body.empty).toBe(false);
      expect((await forge.request('GET', `${repo.path}/raw/hello.txt`, { token })).text).toBe('hi');
    });

    // The writes to one repository are serialised in the process (about 20 git commands each): on a
    // loaded machine the 30 take longer than the default test timeout.
    it('30 parallel writes to one branch: linear history holding every acknowledged write', {
      timeout: 120_000,
    }, async () => {
      const repo = await createRepo(forge, token);
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          forge.request('POST', `${repo.path}/contents/parallel/file-${i}.txt`, {
            token,
            body: { content: b64(`n${i}`) },
          }),
        ),
      );
      const acknowledged = results.filter((r) => r.status === 201);
      expect(acknowledged.length).toBe(30);
      const gitDir = gitDirOf(repo);
      const merges = await runGit(['rev-list', '--merges', '--count', 'main'], { gitDir });
      expect(merges.stdout.trim()).toBe('0');
      expect((await runGit(['rev-list', '--count', 'main'], { gitDir })).stdout.trim()).toBe('31');
      const files = (await runGit(['ls-tree', '--name-only', 'main:parallel'], { gitDir })).stdout
        .trim()
        .split('\n');
      expect(files.sort()).toEqual(Array.from({ length: 30 }, (_, i) => `file-${i}.txt`).sort());
      const inHistory = (await runGit(['rev-list', 'main'], { gitDir })).stdout;
      for (const r of acknowledged) expect(inHistory).toContain(r.body.commit.sha);
    });

    it('hostile input gets a 4xx and changes no ref and no file', async () => {
      const repo = await createRepo(forge, token);
      const gitDir = gitDirOf(repo);
      const refs = async () =>
        (await runGit(['for-each-ref', '--format=%(refname) %(objectname)'], { gitDir })).stdout;
      const before = await refs();
      const attempts: Array<[string, string, unknown, number]> = [
        ['POST', 'contents/..%2F..%2Fescape.txt', { content: b64('x') }, 422],
        // Clients resolve dot segments themselves: this one reaches no route at all.
        ['POST', 'contents/a/../../escape.txt', { content: b64('x') }, 404],
        ['POST', 'contents/a/..%2F..%2Fescape.txt', { content: b64('x') }, 422],
        ['POST', 'contents/.git/config', { content: b64('x') }, 422],
        ['POST', 'contents/dir/.GIT/hooks/x', { content: b64('x') }, 422],
        // The input guards answer a NUL anywhere in the path before any route runs.
        ['POST', 'contents/nul%00byte.txt', { content: b64('x') }, 404],
        ['POST', 'contents/ok.txt', { content: b64('x'), branch: '--upload-pack=touch /tmp/pwned' }, 422],
        ['POST', 'contents/ok.txt', { content: b64('x'), new_branch: '-delete' }, 422],
        ['POST', 'contents/ok.txt', { content: b64('x'), new_branch: 'a..b' }, 422],
        ['POST', 'contents/ok.txt', { content: 'not base64!' }, 422],
        ['POST', 'contents/ok.txt', { content: 12 }, 422],
        ['POST', 'contents/ok.txt', { content: b64('x'), message: 'a\u0000b' }, 422],
        ['POST', 'contents/README.md/inner.txt', { content: b64('x') }, 422],
        ['POST', 'contents', { files: [{ operation: 'create', path: '../x', content: b64('x') }] }, 422],
        ['POST', 'contents', { files: [] }, 422],
        ['DELETE', 'contents/README.md', { sha: '0'.repeat(40) }, 422],
      ];
      for (const [method, path, body, status] of attempts) {
        const res = await forge.request(method, `${repo.path}/${path}`, { token, body });
        expect([path, res.status]).toEqual([path, status]);
      }
      // 100 MB of base64 is refused while it streams in.
      const huge = await fetch(`${forge.url}/api/v1${repo.path}/contents/huge.bin`, {
        method: 'POST',
        headers: { Authorization: `token ${token}`, 'Content-Type': 'application/json' },
        body: `{"content":"${'A'.repeat(100 * 1024 * 1024)}"}`,
      });
      expect(huge.status).toBe(413);
      expect(await refs()).toBe(before);
      expect((await runGit(['ls-tree', '-r', '--name-only', 'main'], { gitDir })).stdout.trim()).toBe(
        'README.md',
      );
    });

    it('needs a signed-in writer: 401 anonymous, 403 for readers, 423 when archived', async () => {
      const repo = await createRepo(forge, token);
      const reader = await forge.createUser();
      const readerToken = await forge.createToken(reader, ['write:repository']);
      expect(
        (await forge.request('POST', `${repo.path}/contents/x.txt`, { body: { content: b64('x') } })).status,
      ).toBe(401);
      expect(
        (
          await forge.request('POST', `${repo.path}/contents/x.txt`, {
            token: readerToken,
            body: { content: b64('x') },
          })
        ).status,
      ).toBe(403);
      const readOnly = await forge.createToken(owner, ['read:repository']);
      expect(
        (
          await forge.request('POST', `${repo.path}/contents/x.txt`, {
            token: readOnly,
            body: { content: b64('x') },
          })
        ).status,
      ).toBe(403);
      expect((await forge.request('PATCH', repo.path, { token, body: { archived: true } })).status).toBe(200);
      const locked = await forge.request('POST', `${repo.path}/contents/x.txt`, {
        token,
        body: { content: b64('x') },
      });
      expect([locked.status, locked.body.message]).toEqual([423, 'repo is archived']);
    });
  });

  function gitDirOf(repo: TestRepo): string {
    return join(
      forge.ctx.config.dataDir,
      'repositories',
      repo.owner.toLowerCase(),
      `${repo.name.toLowerCase()}.git`,
    );
  }
});
