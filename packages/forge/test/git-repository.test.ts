import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGit } from '../src/git/command.js';
import {
  commitInitialReadme,
  commitsBetween,
  countCommits,
  createTag,
  deleteTag,
  getBranch,
  getTag,
  hasNoBranches,
  headBranch,
  InvalidRefNameError,
  initBareRepository,
  listBranches,
  listRefs,
  listTags,
  repositoryPath,
  resolveCommit,
  TagExistsError,
  ZERO_SHA,
} from '../src/git/repository.js';

const author = { name: 'Alice', email: 'alice@example.com', when: new Date('2024-01-02T03:04:05Z') };

describe('git repository wrapper (real git CLI)', () => {
  let root: string;
  let gitDir: string;
  let initial: string;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'forge-git-'));
    gitDir = repositoryPath(root, 'Alice', 'Demo');
    await initBareRepository(gitDir, 'main');
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('lays repositories out lower-cased as <owner>/<repo>.git', () => {
    expect(gitDir).toBe(join(root, 'alice', 'demo.git'));
  });

  it('starts empty, HEAD naming the default branch', async () => {
    expect(await hasNoBranches(gitDir)).toBe(true);
    expect(await headBranch(gitDir)).toBe('main');
    expect(await listTags(gitDir)).toEqual([]);
    expect(await resolveCommit(gitDir, 'main')).toBeNull();
  });

  it('makes a real initial commit with a README on the default branch', async () => {
    initial = await commitInitialReadme(gitDir, { branch: 'main', readme: '# Demo\n', author });
    expect(initial).toMatch(/^[0-9a-f]{40}$/);
    expect(await hasNoBranches(gitDir)).toBe(false);
    const readme = await runGit(['show', 'main:README.md'], { gitDir });
    expect(readme.stdout).toBe('# Demo\n');
    const branch = await getBranch(gitDir, 'main');
    expect(branch).toMatchObject({
      name: 'main',
      commitSha: initial,
      message: 'Initial commit\n',
      authorName: 'Alice',
      authorEmail: 'alice@example.com',
      commitDate: '2024-01-02T03:04:05+00:00',
    });
    expect((await listBranches(gitDir)).map((b) => b.name)).toEqual(['main']);
    expect(await countCommits(gitDir, initial)).toBe(1);
  });

  it('refuses a second initial commit on an existing branch', async () => {
    await expect(commitInitialReadme(gitDir, { branch: 'main', readme: 'x', author })).rejects.toThrow(
      /update-ref/,
    );
  });

  it('resolves branches, shas and rejects option-looking or unknown names', async () => {
    expect(await resolveCommit(gitDir, 'main')).toBe(initial);
    expect(await resolveCommit(gitDir, initial)).toBe(initial);
    expect(await resolveCommit(gitDir, 'nope')).toBeNull();
    expect(await resolveCommit(gitDir, '--all')).toBeNull();
  });

  it('creates lightweight and annotated tags and reads them back', async () => {
    const light = await createTag(gitDir, { name: 'v1.0', commitSha: initial, tagger: author });
    expect(light).toMatchObject({ name: 'v1.0', objectSha: initial, commitSha: initial, annotated: false });
    expect(light.message).toBe('Initial commit\n');
    const annotated = await createTag(gitDir, {
      name: 'release/v2',
      commitSha: initial,
      message: 'second',
      tagger: { ...author, when: new Date('2025-01-01T00:00:00Z') },
    });
    expect(annotated.annotated).toBe(true);
    expect(annotated.objectSha).not.toBe(initial);
    expect(annotated.commitSha).toBe(initial);
    expect(annotated.message).toBe('second\n');
    expect(annotated.createdUnix).toBe(Date.parse('2025-01-01T00:00:00Z') / 1000);
    expect(annotated.commitDate).toBe('2024-01-02T03:04:05+00:00');
    expect((await listTags(gitDir)).map((t) => t.name)).toEqual(['release/v2', 'v1.0']);
    expect(await resolveCommit(gitDir, 'release/v2')).toBe(initial);
  });

  it('lets exactly one of many concurrent creators of one tag win', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () =>
        createTag(gitDir, { name: 'race', commitSha: initial, tagger: author }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(rejected).toHaveLength(9);
    for (const r of rejected) expect(r.reason).toBeInstanceOf(TagExistsError);
  });

  it('rejects tag names git refuses', async () => {
    for (const name of ['bad..name', 'sp ace', 'end.lock', '-dash', 'a/-b']) {
      await expect(createTag(gitDir, { name, commitSha: initial, tagger: author })).rejects.toBeInstanceOf(
        InvalidRefNameError,
      );
    }
    expect(await getTag(gitDir, 'bad..name')).toBeNull();
  });

  it('deletes tags and reports missing ones', async () => {
    expect(await deleteTag(gitDir, 'race')).toBe(true);
    expect(await getTag(gitDir, 'race')).toBeNull();
    expect(await deleteTag(gitDir, 'race')).toBe(false);
  });

  it('lists refs and commits between two points', async () => {
    const refs = await listRefs(gitDir);
    expect(refs.get('refs/heads/main')).toBe(initial);
    expect(refs.get('refs/tags/v1.0')).toBe(initial);
    const commits = await commitsBetween(gitDir, ZERO_SHA, initial, 10);
    expect(commits).toEqual([
      {
        sha: initial,
        message: 'Initial commit\n',
        authorName: 'Alice',
        authorEmail: 'alice@example.com',
        committerName: 'Alice',
        committerEmail: 'alice@example.com',
        timestamp: '2024-01-02T03:04:05+00:00',
      },
    ]);
    expect(await commitsBetween(gitDir, initial, initial, 10)).toEqual([]);
  });
});
