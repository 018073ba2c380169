import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGit } from '../src/git/command.js';
import { parseCgiHeaders, serveHttpBackend } from '../src/git/http-backend.js';
import { commitInitialReadme, getTag, initBareRepository, repositoryPath } from '../src/git/repository.js';

const author = { name: 'Alice', email: 'alice@example.com' };
const identity = {
  GIT_AUTHOR_NAME: 'Bob',
  GIT_AUTHOR_EMAIL: 'bob@example.com',
  GIT_COMMITTER_NAME: 'Bob',
  GIT_COMMITTER_EMAIL: 'bob@example.com',
};

describe('parseCgiHeaders', () => {
  it('takes the status from the Status header and keeps the others', () => {
    expect(parseCgiHeaders('Status: 403 Forbidden\r\nContent-Type: text/plain\r\nExpires: 0')).toEqual({
      status: 403,
      headers: [
        ['Content-Type', 'text/plain'],
        ['Expires', '0'],
      ],
    });
    expect(parseCgiHeaders('Content-Type: x').status).toBe(200);
  });
});

describe('git http-backend bridge (real clone and push)', () => {
  let root: string;
  let work: string;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'forge-cgi-'));
    work = await mkdtemp(join(tmpdir(), 'forge-cgi-work-'));
    const gitDir = repositoryPath(root, 'alice', 'demo');
    await initBareRepository(gitDir, 'main');
    await commitInitialReadme(gitDir, { branch: 'main', readme: '# demo\n', author });
    server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      serveHttpBackend(
        {
          projectRoot: root,
          pathInfo: url.pathname,
          queryString: url.search.slice(1),
          method: req.method ?? 'GET',
          contentType: req.headers['content-type'],
          contentEncoding: req.headers['content-encoding'],
          gitProtocol: req.headers['git-protocol'] as string | undefined,
          remoteUser: 'alice',
          body: req,
        },
        res,
      ).catch(() => {
        res.statusCode = 500;
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await rm(root, { recursive: true, force: true });
    await rm(work, { recursive: true, force: true });
  });

  it('clones, then pushes a commit and a tag back', async () => {
    const clone = join(work, 'demo');
    await runGit(['clone', '--quiet', `${base}/alice/demo.git`, clone]);
    await writeFile(join(clone, 'a.txt'), 'hello\n');
    await runGit(['-C', clone, 'add', 'a.txt']);
    await runGit(['-C', clone, 'commit', '--quiet', '-m', 'add a'], { env: identity });
    await runGit(['-C', clone, 'tag', 'v1']);
    await runGit(['-C', clone, 'push', '--quiet', 'origin', 'main', 'v1']);
    const head = (await runGit(['-C', clone, 'rev-parse', 'HEAD'])).stdout.trim();
    const gitDir = repositoryPath(root, 'alice', 'demo');
    expect((await runGit(['rev-parse', 'main'], { gitDir })).stdout.trim()).toBe(head);
    expect((await getTag(gitDir, 'v1'))?.commitSha).toBe(head);
  });

  it('answers git protocol v2 ls-remote', async () => {
    const { stdout } = await runGit(['-c', 'protocol.version=2', 'ls-remote', `${base}/alice/demo.git`]);
    expect(stdout).toMatch(/refs\/heads\/main\n/);
    expect(stdout).toMatch(/refs\/tags\/v1\n/);
  });

  it('passes http-backend errors through with their status', async () => {
    const res = await fetch(`${base}/alice/missing.git/info/refs?service=git-upload-pack`);
    expect(res.status).toBe(404);
  });
});
