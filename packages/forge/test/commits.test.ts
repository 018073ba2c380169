import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGit } from '../src/git/command.js';
import { startTestForge, type TestForge, type TestUser } from './harness.js';
import { cloneUrl, createRepo, GIT_IDENTITY, headOf, scratchDir, type TestRepo } from './repo-fixtures.js';

/** Commit history, single commits and refs (Gitea's repo/commits.go, repo/git_ref.go). */
describe('commits and refs', () => {
  let forge: TestForge;
  let owner: TestUser;
  let token: string;
  let repo: TestRepo;
  let scratch: Awaited<ReturnType<typeof scratchDir>>;
  const shas: string[] = [];

  beforeAll(async () => {
    forge = await startTestForge();
    owner = await forge.createUser();
    token = await forge.createToken(owner, ['write:repository', 'write:user']);
    repo = await createRepo(forge, token, { autoInit: false });
    scratch = await scratchDir();
    // Four commits a day apart (+02:00), the first authored under the owner's e-mail, pushed over smart HTTP.
    const copy = join(scratch.dir, 'wc');
    await runGit(['init', '--quiet', '--initial-branch=main', copy]);
    const steps: Array<[string, Record<string, string>]> = [
      ['README.md', { GIT_AUTHOR_NAME: 'Owner', GIT_AUTHOR_EMAIL: owner.email }],
      ['a.txt', {}],
      ['b.txt', {}],
      ['a.txt', {}],
    ];
    for (const [index, [name, who]] of steps.entries()) {
      await writeFile(join(copy, name), `line ${index}\nsecond\n`);
      await runGit(['-C', copy, 'add', '-A']);
      const date = `${1_700_000_000 + index * 86_400} +0200`;
      await runGit(['-C', copy, 'commit', '--quiet', '-m', `commit ${index}`], {
        env: { ...GIT_IDENTITY, ...who, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date },
      });
      shas.push(await headOf(copy));
    }
    const remote = cloneUrl(forge, repo, { user: owner.username, secret: token });
    await runGit(['-C', copy, 'tag', 'v1.0', shas[1]!]);
    await runGit(['-C', copy, 'push', '--quiet', remote, 'main', 'v1.0']);
  });
  afterAll(async () => {
    await scratch.cleanup();
    await forge.close();
  });

  it('lists the default branch newest first with stats, files, verification and the page headers', async () => {
    const res = await forge.request('GET', `${repo.path}/commits`, { token });
    expect(res.status).toBe(200);
    expect(res.body.map((c: { sha: string }) => c.sha)).toEqual([...shas].reverse());
    expect(res.headers.get('x-total-count')).toBe('4');
    expect(res.headers.get('x-total')).toBe('4');
    expect(res.headers.get('x-page')).toBe('1');
    expect(res.headers.get('x-perpage')).toBe('30');
    expect(res.headers.get('x-pagecount')).toBe('1');
    expect(res.headers.get('x-hasmore')).toBe('false');
    expect(res.headers.get('link')).toBeNull();
    expect(res.headers.get('access-control-expose-headers')).toBe(
      'X-Total-Count, X-Page, X-PerPage, X-Total, X-PageCount, X-HasMore',
    );
    const api = `${forge.appUrl}api/v1${repo.path}`;
    const newest = res.body[0];
    expect(newest).toEqual({
      url: `${api}/git/commits/${shas[3]}`,
      sha: shas[3],
      created: '2023-11-18T00:13:20+02:00',
      html_url: `${forge.appUrl}${repo.owner}/${repo.name}/commit/${shas[3]}`,
      commit: {
        url: `${api}/git/commits/${shas[3]}`,
        author: { name: 'Test Author', email: 'author@example.com', date: '2023-11-18T00:13:20+02:00' },
        committer: { name: 'Test Author', email: 'author@example.com', date: '2023-11-18T00:13:20+02:00' },
        message: 'commit 3\n',
        tree: {
          url: expect.stringMatching(`^${api}/git/trees/[0-9a-f]{40}$`),
          sha: expect.any(String),
          created: '2023-11-18T00:13:20+02:00',
        },
        verification: {
          verified: false,
          reason: 'gpg.error.not_signed_commit',
          signature: '',
          signer: null,
          payload: '',
        },
      },
      author: null,
      committer: null,
      parents: [{ url: `${api}/git/commits/${shas[2]}`, sha: shas[2], created: '0001-01-01T00:00:00Z' }],
      files: [{ filename: 'a.txt', status: 'modified' }],
      stats: { total: 2, additions: 1, deletions: 1 },
    });
    // The first commit carries the owner's e-mail: its author is the owner's user (as anonymous sees it).
    const initial = res.body[3];
    expect(initial.parents).toEqual([]);
    expect(initial.author.login).toBe(owner.username);
    expect(initial.author.email).toBe(
      `${owner.username.toLowerCase()}@noreply.${new URL(forge.appUrl).hostname}`,
    );
    expect(initial.committer).toBeNull();
    expect(initial.files).toEqual([{ filename: 'README.md', status: 'added' }]);
    expect(initial.stats).toEqual({ total: 2, additions: 2, deletions: 0 });
  });

  it('pages with limit: Link, X-HasMore and X-PageCount as Gitea sets them', async () => {
    const first = await forge.request('GET', `${repo.path}/commits?limit=3`, { token });
    expect(first.body.map((c: { sha: string }) => c.sha)).toEqual([shas[3], shas[2], shas[1]]);
    expect(first.headers.get('x-hasmore')).toBe('true');
    expect(first.headers.get('x-pagecount')).toBe('2');
    expect(first.headers.get('x-perpage')).toBe('3');
    const base = `${forge.appUrl}api/v1${repo.path}/commits`;
    expect(first.headers.get('link')).toBe(
      `<${base}?limit=3&page=2>; rel="next",<${base}?limit=3&page=2>; rel="last"`,
    );
    const second = await forge.request('GET', `${repo.path}/commits?limit=3&page=2`, { token });
    expect(second.body.map((c: { sha: string }) => c.sha)).toEqual([shas[0]]);
    expect(second.headers.get('x-hasmore')).toBe('false');
    expect(second.headers.get('x-page')).toBe('2');
    expect(second.headers.get('link')).toBe(
      `<${base}?limit=3&page=1>; rel="first",<${base}?limit=3&page=1>; rel="prev"`,
    );
    // A limit above the maximum page (MaxResponseItems, then CommitsRangeSize: 50) is capped.
    const big = await forge.request('GET', `${repo.path}/commits?limit=500`, { token });
    expect(big.headers.get('x-perpage')).toBe('50');
  });

  it('filters by sha, path, since/until and turns stats, files and verification off', async () => {
    const fromTag = await forge.request('GET', `${repo.path}/commits?sha=v1.0`, { token });
    expect(fromTag.body.map((c: { sha: string }) => c.sha)).toEqual([shas[1], shas[0]]);
    const byPath = await forge.request('GET', `${repo.path}/commits?path=a.txt`, { token });
    expect(byPath.body.map((c: { sha: string }) => c.sha)).toEqual([shas[3], shas[1]]);
    expect(byPath.headers.get('x-total-count')).toBe('2');
    const since = await forge.request('GET', `${repo.path}/commits?since=2023-11-16T12:00:00Z`, { token });
    expect(since.body.map((c: { sha: string }) => c.sha)).toEqual([shas[3], shas[2]]);
    const until = await forge.request(
      'GET',
      `${repo.path}/commits?until=2023-11-16T12:00:00Z&sha=${shas[2]}`,
      {
        token,
      },
    );
    expect(until.body.map((c: { sha: string }) => c.sha)).toEqual([shas[1], shas[0]]);
    const bare = await forge.request(
      'GET',
      `${repo.path}/commits?stat=false&files=false&verification=false&limit=1`,
      {
        token,
      },
    );
    expect(bare.body[0].stats).toBeNull();
    expect(bare.body[0].files).toBeNull();
    expect(bare.body[0].commit.verification).toBeNull();
  });

  it('answers 404 for unknown starts and paths, 409 for an empty repository', async () => {
    expect((await forge.request('GET', `${repo.path}/commits?sha=nope`, { token })).status).toBe(404);
    expect((await forge.request('GET', `${repo.path}/commits?path=missing.txt`, { token })).status).toBe(404);
    const empty = await createRepo(forge, token, { autoInit: false });
    const res = await forge.request('GET', `${empty.path}/commits`, { token });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ message: 'Git Repository is empty.', url: `${forge.appUrl}api/swagger` });
    expect((await forge.request('GET', `${repo.path}/commits?since=yesterday`, { token })).status).toBe(422);
  });

  it('never lets a query value become a git option', async () => {
    const target = join(scratch.dir, 'written-by-git');
    for (const sha of [`--output=${target}`, '-p', `--exec=touch ${target}`]) {
      const res = await forge.request('GET', `${repo.path}/commits?sha=${encodeURIComponent(sha)}`, {
        token,
      });
      expect(res.status).toBe(404);
    }
    const byPath = await forge.request(
      'GET',
      `${repo.path}/commits?path=${encodeURIComponent(`--output=${target}`)}`,
      {
        token,
      },
    );
    expect(byPath.status).toBe(404);
    expect(existsSync(target)).toBe(false);
  });

  it('GET /git/commits/{sha}: by sha, branch or tag; 422 for a malformed ref, 404 for an unknown one', async () => {
    const bySha = await forge.request('GET', `${repo.path}/git/commits/${shas[1]}`, { token });
    expect(bySha.status).toBe(200);
    expect(bySha.body.sha).toBe(shas[1]);
    expect(bySha.body.files).toEqual([{ filename: 'a.txt', status: 'added' }]);
    expect((await forge.request('GET', `${repo.path}/git/commits/v1.0`, { token })).body.sha).toBe(shas[1]);
    expect((await forge.request('GET', `${repo.path}/git/commits/main`, { token })).body.sha).toBe(shas[3]);
    const malformed = await forge.request('GET', `${repo.path}/git/commits/a..b`, { token });
    expect(malformed.status).toBe(422);
    expect(malformed.body.message).toBe('no valid ref or sha: a..b');
    expect((await forge.request('GET', `${repo.path}/git/commits/${'0'.repeat(40)}`, { token })).status).toBe(
      404,
    );
  });

  it('GET /git/refs lists every ref; a full name answers one object, a prefix a list, nothing 404', async () => {
    const api = `${forge.appUrl}api/v1${repo.path}`;
    const all = await forge.request('GET', `${repo.path}/git/refs`, { token });
    expect(all.status).toBe(200);
    expect(all.body).toEqual([
      {
        ref: 'refs/heads/main',
        url: `${api}/git/refs/heads/main`,
        object: { type: 'commit', sha: shas[3], url: `${api}/git/commits/${shas[3]}` },
      },
      {
        ref: 'refs/tags/v1.0',
        url: `${api}/git/refs/tags/v1.0`,
        object: { type: 'commit', sha: shas[1], url: `${api}/git/commits/${shas[1]}` },
      },
    ]);
    const one = await forge.request('GET', `${repo.path}/git/refs/heads/main`, { token });
    expect(one.body).toEqual(all.body[0]);
    const prefix = await forge.request('GET', `${repo.path}/git/refs/tags`, { token });
    expect(prefix.body).toEqual([all.body[1]]);
    expect((await forge.request('GET', `${repo.path}/git/refs/pulls`, { token })).status).toBe(404);
  });

  it('hides a private repository from strangers (404) and needs a repository scope (403)', async () => {
    const hidden = await createRepo(forge, token, { private: true });
    const stranger = await forge.createUser();
    const strangerToken = await forge.createToken(stranger, ['read:repository']);
    for (const path of ['commits', 'git/refs', 'git/commits/main']) {
      expect((await forge.request('GET', `${hidden.path}/${path}`, { token: strangerToken })).status).toBe(
        404,
      );
      expect((await forge.request('GET', `${hidden.path}/${path}`)).status).toBe(404);
    }
    const userOnly = await forge.createToken(owner, ['read:user']);
    expect((await forge.request('GET', `${repo.path}/commits`, { token: userOnly })).status).toBe(403);
  });
});
