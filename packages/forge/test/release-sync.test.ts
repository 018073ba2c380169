// Release records follow the git tags after any crash between a git write and its database write
// (Gitea's SyncReleasesWithTags, run at start-up and by `forge admin repo-sync-releases`).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGit } from '../src/git/command.js';
import { repositoryPath } from '../src/git/repository.js';
import { syncAllReleases } from '../src/services/release-sync.js';
import { findReleaseByTag, insertRelease } from '../src/store/releases.js';
import { findRepositoryByName } from '../src/store/repositories.js';
import { startTestForge, type TestForge, type TestUser } from './harness.js';
import { createRepo, GIT_IDENTITY, type TestRepo } from './repo-fixtures.js';

describe('release sync', () => {
  let forge: TestForge;
  let owner: TestUser;
  let token: string;

  beforeAll(async () => {
    forge = await startTestForge();
    owner = await forge.createUser();
    token = await forge.createToken(owner, ['write:repository', 'write:user']);
  });
  afterAll(() => forge.close());

  const gitDirOf = (repo: TestRepo) =>
    repositoryPath(join(forge.ctx.config.dataDir, 'repositories'), repo.owner, repo.name);
  const git = (repo: TestRepo, ...args: string[]) =>
    runGit(args, { gitDir: gitDirOf(repo), env: GIT_IDENTITY });
  const record = async (repo: TestRepo, tag: string) => {
    const found = (await findRepositoryByName(forge.ctx.db, repo.owner, repo.name))!;
    return findReleaseByTag(forge.ctx.db, found.repo.id, tag);
  };

  it('repairs each state a crash can leave, and a second run changes nothing', async () => {
    const repo = await createRepo(forge, token);
    const main = (await git(repo, 'rev-parse', 'main')).stdout.trim();
    // 1. A tag whose record was never written (push or create interrupted after git).
    await git(repo, 'tag', 'orphan-tag', main);
    // 2. A tag-only record whose tag is gone (tag deletion interrupted after git).
    expect(
      (await forge.request('POST', `${repo.path}/tags`, { token, body: { tag_name: 'gone-tag' } })).status,
    ).toBe(201);
    await git(repo, 'tag', '-d', 'gone-tag');
    // 3. A published release whose tag is gone.
    const published = await forge.request('POST', `${repo.path}/releases`, {
      token,
      body: { tag_name: 'v1', name: 'one' },
    });
    expect(published.status).toBe(201);
    await git(repo, 'tag', '-d', 'v1');
    // 4. A tag that moved without its record following.
    const moved = await forge.request('POST', `${repo.path}/releases`, { token, body: { tag_name: 'v2' } });
    expect(moved.status).toBe(201);
    const parent = (await git(repo, 'commit-tree', `${main}^{tree}`, '-p', main, '-m', 'next')).stdout.trim();
    await git(repo, 'update-ref', 'refs/tags/v2', parent);
    // 5. A draft has no tag and stays as it is.
    const draft = await forge.request('POST', `${repo.path}/releases`, {
      token,
      body: { tag_name: 'draft-1', draft: true },
    });
    expect(draft.status).toBe(201);

    const [report] = await syncAllReleases(forge.ctx, `${repo.owner}/${repo.name}`);
    expect(report).toEqual({
      repository: `${repo.owner}/${repo.name}`,
      added: 1,
      removed: 1,
      drafted: 1,
      updated: 1,
    });
    expect(await record(repo, 'orphan-tag')).toMatchObject({ is_tag: 1, sha1: main });
    expect(await record(repo, 'gone-tag')).toBeUndefined();
    // Gitea's PushUpdateDeleteTag: the release stays, as a draft without a commit, publishable again.
    expect(await record(repo, 'v1')).toMatchObject({ is_tag: 0, is_draft: 1, sha1: '', num_commits: 0 });
    expect(await record(repo, 'v2')).toMatchObject({ is_tag: 0, is_draft: 0, sha1: parent, num_commits: 2 });
    expect(await record(repo, 'draft-1')).toMatchObject({ is_tag: 0, is_draft: 1, sha1: '' });

    const [again] = await syncAllReleases(forge.ctx, `${repo.owner}/${repo.name}`);
    expect(again).toMatchObject({ added: 0, removed: 0, drafted: 0, updated: 0 });

    // The repaired release can be published again: that re-creates its tag.
    const republished = await forge.request('PATCH', `${repo.path}/releases/${published.body.id}`, {
      token,
      body: { draft: false },
    });
    expect(republished.status).toBe(200);
    expect((await git(repo, 'rev-parse', 'refs/tags/v1')).stdout.trim()).toBe(main);
    // And the tag that only had a git ref is a tag-only record the tags API now knows.
    expect((await forge.request('DELETE', `${repo.path}/tags/orphan-tag`, { token })).status).toBe(204);
  });

  it('a create that finds its new tag already recorded as tag-only by a sync still succeeds', async () => {
    const repo = await createRepo(forge, token);
    const found = (await findRepositoryByName(forge.ctx.db, repo.owner, repo.name))!;
    const main = (await git(repo, 'rev-parse', 'main')).stdout.trim();
    // What a concurrent sync leaves: the git tag and its tag-only record.
    await git(repo, 'tag', 'v9', main);
    await insertRelease(forge.ctx.db, {
      repoId: found.repo.id,
      publisherId: owner.id,
      tagName: 'v9',
      target: '',
      title: '',
      note: '',
      sha1: main,
      numCommits: 1,
      isDraft: false,
      isPrerelease: false,
      isTag: true,
      createdUnix: 1,
    });
    const created = await forge.request('POST', `${repo.path}/releases`, {
      token,
      body: { tag_name: 'v9', name: 'nine' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ tag_name: 'v9', name: 'nine', draft: false });
  });

  it('an unknown --repo is an error', async () => {
    await expect(syncAllReleases(forge.ctx, 'nobody/nothing')).rejects.toThrow(
      'repository nobody/nothing does not exist',
    );
  });
});
