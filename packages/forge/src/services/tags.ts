import type { Static } from 'typebox';
import { Conflict, Invalid, NotFound } from '../errors.js';
import {
  commitsBetween,
  countCommits,
  createTag as createGitTag,
  deleteTag as deleteGitTag,
  type GitTag,
  getTag as getGitTag,
  InvalidRefNameError,
  listTags as listGitTags,
  resolveCommit,
  TagExistsError,
  ZERO_SHA,
} from '../git/repository.js';
import { isUniqueViolation } from '../store/constraint-errors.js';
import { deleteReleaseRow, findReleaseByTag, insertRelease } from '../store/releases.js';
/** Tags of a repository (routers/api/v1/repo/tag.go): git is the source, release records guard them. */
import type { CreateTagOptionSchema } from '../structs/release.js';
import { nowUnix } from './context.js';
import { canControlTag } from './protected-tags.js';
import { RepoActionType, recordRepoAction, tagPushContent } from './repo-activity.js';
import { type RepoContext, requireDoer } from './repo-context.js';

/** One page of tags, newest first, and how many there are. */
export async function listTags(
  ctx: RepoContext,
  page: { limit: number; offset: number },
): Promise<{ tags: GitTag[]; total: number }> {
  const tags = await listGitTags(ctx.gitDir);
  return { tags: tags.slice(page.offset, page.offset + page.limit), total: tags.length };
}

/** One tag by name; 404 `tag doesn't exist`. */
export async function getTag(ctx: RepoContext, name: string): Promise<GitTag> {
  const tag = await getGitTag(ctx.gitDir, name);
  if (!tag) throw new NotFound(`tag doesn't exist: ${name}`);
  return tag;
}

/** CreateTagOption. */
export type CreateTagInput = Static<typeof CreateTagOptionSchema>;

/**
 * Creates a git tag and its tag-only record: 409 when any record or tag of that name exists, 422 when
 * protected for the caller, 404 when the target names no commit.
 */
export async function createTag(ctx: RepoContext, input: CreateTagInput): Promise<GitTag> {
  const doer = requireDoer(ctx);
  const name = input.tag_name;
  const exists = () => new Conflict(`tag already exists [name: ${name}]`);
  if ((await findReleaseByTag(ctx.db, ctx.repo.id, name)) || (await getGitTag(ctx.gitDir, name)))
    throw exists();
  if (!(await canControlTag(ctx, name, doer.id)))
    throw new Invalid('user not allowed to create protected tag');
  const target = input.target || ctx.repo.default_branch;
  const commitSha = await resolveCommit(ctx.gitDir, target);
  if (!commitSha) throw new NotFound(`target not found: object does not exist [id: ${target}]`);
  const now = nowUnix();
  // Git first, then the record (as Gitea's CreateNewTag): a crash in between leaves a tag the next sync
  // records; the zero old value of the ref makes exactly one of concurrent creators win.
  let tag: GitTag;
  try {
    tag = await createGitTag(ctx.gitDir, {
      name,
      commitSha,
      message: input.message ?? '',
      tagger: { name: doer.name, email: doer.email },
    });
  } catch (error) {
    if (error instanceof TagExistsError) throw exists();
    if (error instanceof InvalidRefNameError)
      throw new Invalid(`tag name "${name}" is not a valid git tag name`);
    throw error;
  }
  try {
    await insertRelease(ctx.db, {
      repoId: ctx.repo.id,
      publisherId: doer.id,
      tagName: name,
      target: '',
      title: '',
      note: '',
      sha1: commitSha,
      numCommits: await countCommits(ctx.gitDir, commitSha),
      isDraft: false,
      isPrerelease: false,
      isTag: true,
      createdUnix: now,
    });
  } catch (error) {
    // A release or a sync recorded the new tag in between: the tag exists and has its record.
    if (!isUniqueViolation(error)) throw error;
  }
  const [head] = await commitsBetween(ctx.gitDir, ZERO_SHA, commitSha, 1);
  await recordRepoAction(ctx.db, {
    opType: RepoActionType.PushTag,
    actor: doer,
    repo: ctx.repo,
    owner: ctx.owner,
    refName: `refs/tags/${name}`,
    content: tagPushContent(head),
    createdUnix: now,
  });
  return tag;
}

/**
 * Deletes a tag and its tag-only record: 404 without a record, 409 when a release uses it, 422 when
 * protected for the caller.
 */
export async function deleteTag(ctx: RepoContext, name: string): Promise<void> {
  const doer = requireDoer(ctx);
  const record = await findReleaseByTag(ctx.db, ctx.repo.id, name);
  if (!record) throw new NotFound();
  if (record.is_tag !== 1) throw new Conflict('a tag attached to a release cannot be deleted directly');
  if (!(await canControlTag(ctx, record.tag_name, doer.id))) {
    throw new Invalid('user not allowed to delete protected tag');
  }
  await deleteGitTag(ctx.gitDir, record.tag_name);
  await deleteReleaseRow(ctx.db, record.id);
  await recordRepoAction(ctx.db, {
    opType: RepoActionType.DeleteTag,
    actor: doer,
    repo: ctx.repo,
    owner: ctx.owner,
    refName: `refs/tags/${record.tag_name}`,
    content: '',
    createdUnix: nowUnix(),
  });
}
