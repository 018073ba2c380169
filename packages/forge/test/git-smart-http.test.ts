import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitCommandError, runGit } from '../src/git/command.js';
import { startTestForge, type TestForge, type TestUser } from './harness.js';
import { cloneAndCommit, cloneUrl, createRepo, GIT_IDENTITY, headOf, scratchDir } from './repo-fixtures.js';

/** Clone, fetch and push through the forge's smart HTTP with the real git client. */
describe('git smart HTTP', () => {
  let forge: TestForge;
  let owner: TestUser;
  let ownerToken: string;
  let other: TestUser;
  let work: Awaited<ReturnType<typeof scratchDir>>;

  const gitFails = async (args: string[]): Promise<string> => {
    try {
      await runGit(args);
    } catch (error) {
      if (error instanceof GitCommandError) return error.stderr;
      throw error;
    }
    throw new Error(`git ${args.join(' ')} unexpectedly succeeded`);
  };

  beforeAll(async () => {
    forge = await startTestForge();
    owner = await forge.createUser();
    other = await forge.createUser();
    ownerToken = await forge.createToken(owner, ['write:repository', 'write:user']);
    work = await scratchDir();
  });
  afterAll(async () => {
    await work.cleanup();
    await forge.close();
  });

  it('clones a public repository anonymously and gets the auto_init README commit', async () => {
    const repo = await createRepo(forge, ownerToken);
    const copy = `${work.dir}/${repo.name}`;
    await runGit(['clone', '--quiet', cloneUrl(forge, repo), copy]);
    const log = await runGit(['-C', copy, 'log', '--format=%s %an', '-1']);
    expect(log.stdout.trim()).toBe(`Initial commit ${owner.username}`);
    const branch = await forge.request('GET', `${repo.path}/branches/main`);
    expect(branch.body.commit.id).toBe(await headOf(copy));
  });

  it('refuses anonymous pushes with a Basic challenge and accepts a writer with a token', async () => {
    const repo = await createRepo(forge, ownerToken);
    const copy = await cloneAndCommit(cloneUrl(forge, repo), work.dir);
    const challenge = await fetch(
      `${forge.url}/${repo.owner}/${repo.name}.git/info/refs?service=git-receive-pack`,
    );
    expect(challenge.status).toBe(401);
    expect(challenge.headers.get('www-authenticate')).toBe('Basic realm="Gitea"');
    expect(await gitFails(['-C', copy, 'push', '--quiet', cloneUrl(forge, repo), 'main'])).toMatch(
      /Authentication failed|could not read Username|terminal prompts disabled/,
    );
    await runGit([
      '-C',
      copy,
      'push',
      '--quiet',
      cloneUrl(forge, repo, { user: owner.username, secret: ownerToken }),
      'main',
    ]);
    const branch = await forge.request('GET', `${repo.path}/branches/main`);
    expect(branch.body.commit.id).toBe(await headOf(copy));
  });

  it('accepts password Basic auth and refuses tokens without the repository write scope', async () => {
    const repo = await createRepo(forge, ownerToken);
    const copy = await cloneAndCommit(cloneUrl(forge, repo), work.dir);
    const readOnly = await forge.createToken(owner, ['read:repository']);
    const userOnly = await forge.createToken(owner, ['write:user']);
    const readRes = await fetch(
      `${forge.url}/${repo.owner}/${repo.name}.git/info/refs?service=git-receive-pack`,
      {
        headers: {
          authorization: `Basic ${Buffer.from(`${owner.username}:${readOnly}`).toString('base64')}`,
        },
      },
    );
    expect(readRes.status).toBe(403);
    const cloneRes = await fetch(
      `${forge.url}/${repo.owner}/${repo.name}.git/info/refs?service=git-upload-pack`,
      {
        headers: {
          authorization: `Basic ${Buffer.from(`${owner.username}:${userOnly}`).toString('base64')}`,
        },
      },
    );
    expect(cloneRes.status).toBe(403);
    await runGit([
      '-C',
      copy,
      'push',
      '--quiet',
      cloneUrl(forge, repo, { user: owner.username, secret: owner.password }),
      'main',
    ]);
  });

  it('hides private repositories: anonymous is challenged, other users get 404, readers may clone', async () => {
    const repo = await createRepo(forge, ownerToken, { private: true });
    const path = `${forge.url}/${repo.owner}/${repo.name}.git/info/refs?service=git-upload-pack`;
    expect((await fetch(path)).status).toBe(401);
    const otherAuth = `Basic ${Buffer.from(`${other.username}:${other.password}`).toString('base64')}`;
    expect((await fetch(path, { headers: { authorization: otherAuth } })).status).toBe(404);
    await forge.request('PUT', `${repo.path}/collaborators/${other.username}`, {
      token: ownerToken,
      body: { permission: 'read' },
    });
    const copy = `${work.dir}/${repo.name}-reader`;
    await runGit([
      'clone',
      '--quiet',
      cloneUrl(forge, repo, { user: other.username, secret: other.password }),
      copy,
    ]);
    await runGit(['-C', copy, 'commit', '--quiet', '--allow-empty', '-m', 'x'], { env: GIT_IDENTITY });
    // A reader may not push.
    const pushAuth = `Basic ${Buffer.from(`${other.username}:${other.password}`).toString('base64')}`;
    const push = await fetch(
      `${forge.url}/${repo.owner}/${repo.name}.git/info/refs?service=git-receive-pack`,
      {
        headers: { authorization: pushAuth },
      },
    );
    expect(push.status).toBe(403);
  });

  it('a pushed tag becomes a tag-only record, then a release; deleting the tag removes the record', async () => {
    const repo = await createRepo(forge, ownerToken);
    const auth = { user: owner.username, secret: ownerToken };
    const copy = await cloneAndCommit(cloneUrl(forge, repo, auth), work.dir);
    await runGit(['-C', copy, 'tag', '-a', 'v2.0.0', '-m', 'Version 2'], { env: GIT_IDENTITY });
    await runGit(['-C', copy, 'push', '--quiet', 'origin', 'main', 'v2.0.0']);
    const head = await headOf(copy);

    // The tag is there, not yet a release.
    const tag = await forge.request('GET', `${repo.path}/tags/v2.0.0`);
    expect(tag.status).toBe(200);
    expect(tag.body).toMatchObject({ name: 'v2.0.0', message: 'Version 2', commit: { sha: head } });
    expect((await forge.request('GET', `${repo.path}/releases`)).body).toEqual([]);
    expect((await forge.request('GET', `${repo.path}/releases/tags/v2.0.0`)).status).toBe(404);
    // POST /tags sees the record (409); DELETE of a tag-only record would be allowed.
    const dup = await forge.request('POST', `${repo.path}/tags`, {
      token: ownerToken,
      body: { tag_name: 'v2.0.0' },
    });
    expect(dup.status).toBe(409);

    const created = await forge.request('POST', `${repo.path}/releases`, {
      token: ownerToken,
      body: { tag_name: 'v2.0.0', name: 'Two', body: 'from a pushed tag' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      tag_name: 'v2.0.0',
      name: 'Two',
      target_commitish: '',
      draft: false,
    });
    const latest = await forge.request('GET', `${repo.path}/releases/latest`);
    expect(latest.body.id).toBe(created.body.id);

    // Push a second tag, then delete it with git push --delete: its tag-only record goes too.
    await runGit(['-C', copy, 'tag', 'v2.0.1']);
    await runGit(['-C', copy, 'push', '--quiet', 'origin', 'v2.0.1']);
    expect(
      (await forge.request('POST', `${repo.path}/tags`, { token: ownerToken, body: { tag_name: 'v2.0.1' } }))
        .status,
    ).toBe(409);
    await runGit(['-C', copy, 'push', '--quiet', 'origin', '--delete', 'v2.0.1']);
    expect((await forge.request('GET', `${repo.path}/tags/v2.0.1`)).status).toBe(404);
    const recreated = await forge.request('POST', `${repo.path}/tags`, {
      token: ownerToken,
      body: { tag_name: 'v2.0.1' },
    });
    expect(recreated.status).toBe(201);
  });

  it('the first push into an empty repository clears the empty flag and sets the default branch', async () => {
    const repo = await createRepo(forge, ownerToken, { autoInit: false });
    expect((await forge.request('GET', repo.path)).body).toMatchObject({
      empty: true,
      default_branch: 'main',
    });
    const copy = `${work.dir}/${repo.name}-init`;
    await runGit(['init', '--quiet', '--initial-branch=trunk', copy]);
    await runGit(['-C', copy, 'commit', '--quiet', '--allow-empty', '-m', 'first'], { env: GIT_IDENTITY });
    const url = cloneUrl(forge, repo, { user: owner.username, secret: ownerToken });
    await runGit(['-C', copy, 'push', '--quiet', url, 'trunk']);
    const info = await forge.request('GET', repo.path);
    expect(info.body).toMatchObject({ empty: false, default_branch: 'trunk' });
    // Releases now work, with the new default branch as the target.
    const created = await forge.request('POST', `${repo.path}/releases`, {
      token: ownerToken,
      body: { tag_name: 'v1' },
    });
    expect(created.status).toBe(201);
    expect(created.body.target_commitish).toBe('trunk');
    // A clone of the repository checks out trunk.
    const clone = `${work.dir}/${repo.name}-clone`;
    await runGit(['clone', '--quiet', cloneUrl(forge, repo), clone]);
    expect((await runGit(['-C', clone, 'branch', '--show-current'])).stdout.trim()).toBe('trunk');
  });

  it('records commit_repo and push_tag activity for the pusher', async () => {
    const repo = await createRepo(forge, ownerToken);
    const copy = await cloneAndCommit(
      cloneUrl(forge, repo, { user: owner.username, secret: ownerToken }),
      work.dir,
    );
    await runGit(['-C', copy, 'tag', 'act-1']);
    await runGit(['-C', copy, 'push', '--quiet', 'origin', 'main', 'act-1']);
    const repoId = (await forge.request('GET', repo.path)).body.id;
    const rows = await forge.ctx.db
      .selectFrom('action')
      .select(['op_type', 'ref_name', 'content', 'user_id', 'act_user_id'])
      .where('repo_id', '=', repoId)
      .where('op_type', 'in', [5, 9])
      .execute();
    const commit = rows.find((r) => r.op_type === 5)!;
    expect(commit).toMatchObject({ ref_name: 'refs/heads/main', user_id: owner.id, act_user_id: owner.id });
    const content = JSON.parse(commit.content);
    expect(content.Len).toBe(1);
    expect(content.Commits[0]).toMatchObject({ Sha1: await headOf(copy), AuthorName: 'Test Author' });
    expect(content.CompareURL).toMatch(/\/compare\/[0-9a-f]{40}\.\.\.[0-9a-f]{40}$/);
    const tagRow = rows.find((r) => r.op_type === 9)!;
    expect(tagRow).toMatchObject({ ref_name: 'refs/tags/act-1', act_user_id: owner.id });
  });

  it('answers 404 for unknown repositories and paths outside the smart protocol', async () => {
    expect(
      (await fetch(`${forge.url}/${owner.username}/missing.git/info/refs?service=git-upload-pack`)).status,
    ).toBe(401);
    const auth = `Basic ${Buffer.from(`${owner.username}:${owner.password}`).toString('base64')}`;
    expect(
      (
        await fetch(`${forge.url}/${owner.username}/missing.git/info/refs?service=git-upload-pack`, {
          headers: { authorization: auth },
        })
      ).status,
    ).toBe(404);
    const repo = await createRepo(forge, ownerToken);
    expect((await fetch(`${forge.url}/${repo.owner}/${repo.name}.git/objects/info/packs`)).status).toBe(404);
  });
});
