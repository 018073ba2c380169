/**
 * The seed's Releases rules 1–7 and the tag-only → release transition, with Gitea's behaviour where the
 * seed is silent (routers/api/v1/repo/release.go, services/release/release.go).
 */

import type { Kysely } from 'kysely';
import { Conflict, Invalid, NotFound } from '../errors.js';
import {
  commitsBetween,
  countCommits,
  createTag,
  deleteTag,
  getTag,
  InvalidRefNameError,
  resolveCommit,
  TagExistsError,
  ZERO_SHA,
} from '../git/repository.js';
import { isUniqueViolation } from '../store/constraint-errors.js';
import {
  convertTagOnlyRecord,
  countReleases,
  deleteReleaseRow,
  findLatestRelease,
  findReleaseById,
  findReleaseByTag,
  insertRelease,
  listReleases as listReleaseRows,
  markReleaseTagOnly,
  type NewReleaseValues,
  updateRelease,
} from '../store/releases.js';
import { AccessMode, type Database, type ReleaseRow, type UserRow } from '../store/schema.js';
import { nowUnix } from './context.js';
import { UnitType } from './permissions.js';
import { canControlTag } from './protected-tags.js';
import { RepoActionType, recordRepoAction, tagPushContent } from './repo-activity.js';
import { type RepoContext, requireDoer } from './repo-context.js';

/** CreateReleaseOption. */
export interface CreateReleaseInput {
  tag_name: string;
  tag_message?: string;
  target_commitish?: string;
  name?: string;
  body?: string;
  draft?: boolean;
  prerelease?: boolean;
}

/** EditReleaseOption: strings apply when non-empty, booleans when present. */
export interface EditReleaseInput {
  tag_name?: string;
  target_commitish?: string;
  name?: string;
  body?: string;
  draft?: boolean;
  prerelease?: boolean;
}

/** Gitea truncates titles to 255 display characters on save. */
const MAX_TITLE_CHARS = 255;

function truncateTitle(title: string): string {
  const chars = [...title];
  return chars.length <= MAX_TITLE_CHARS ? title : `${chars.slice(0, MAX_TITLE_CHARS - 1).join('')}…`;
}

/** Drafts are visible to writers of the repository or of its releases unit (seed rule 1). */
export function canSeeDrafts(ctx: RepoContext): boolean {
  return ctx.permission.accessMode >= AccessMode.Write || ctx.permission.canWrite(UnitType.Releases);
}

/** Seed rule 1: one filtered page and the filtered total. */
export async function listReleases(
  ctx: RepoContext,
  query: { draft?: boolean; prerelease?: boolean; limit: number; offset: number },
): Promise<{ rows: ReleaseRow[]; total: number }> {
  const filter = {
    repoId: ctx.repo.id,
    includeDrafts: canSeeDrafts(ctx),
    draft: query.draft,
    prerelease: query.prerelease,
  };
  const rows = await listReleaseRows(ctx.db, filter, { limit: query.limit, offset: query.offset });
  // A short page that is not empty (or a short first page) already tells the total.
  const known = rows.length < query.limit && (rows.length > 0 || query.offset === 0);
  const total = known ? query.offset + rows.length : await countReleases(ctx.db, filter);
  return { rows, total };
}

/** Gitea's `NumReleases`: published (non-draft) releases, shown as `release_counter`. */
export function countPublishedReleases(db: Kysely<Database>, repoId: number): Promise<number> {
  return countReleases(db, { repoId, includeDrafts: false });
}

/** Seed rule 2: newest published, non-prerelease release, else 404. */
export async function getLatestRelease(ctx: RepoContext): Promise<ReleaseRow> {
  const row = await findLatestRelease(ctx.db, ctx.repo.id);
  if (!row) throw new NotFound();
  return row;
}

/** Seed rule 3: a release of this repository by id; tag-only records are 404. */
export async function getReleaseById(ctx: RepoContext, id: number): Promise<ReleaseRow> {
  const row = await findReleaseById(ctx.db, ctx.repo.id, id);
  if (!row || row.is_tag === 1) throw new NotFound();
  return row;
}

/** A release by tag name; tag-only records are 404, drafts only for writers and their publisher. */
export async function getReleaseByTag(ctx: RepoContext, tagName: string): Promise<ReleaseRow> {
  const row = await findReleaseByTag(ctx.db, ctx.repo.id, tagName);
  if (!row || row.is_tag === 1) throw new NotFound();
  if (row.is_draft === 1 && !canSeeDrafts(ctx) && ctx.doer?.id !== row.publisher_id) throw new NotFound();
  return row;
}

/** The git side of a non-draft release: the tag exists afterwards and `created` tells if we made it. */
interface TagOutcome {
  commitSha: string;
  numCommits: number;
  created: boolean;
}

/**
 * Gitea's createTag: an existing tag is used as is; a missing one is checked against tag protection for
 * the publisher (422), its target resolved (404) and then created atomically.
 */
async function ensureTag(
  ctx: RepoContext,
  publisher: UserRow,
  tagName: string,
  target: string,
  message: string,
): Promise<TagOutcome> {
  const existing = await getTag(ctx.gitDir, tagName);
  if (existing) {
    return {
      commitSha: existing.commitSha,
      numCommits: await countCommits(ctx.gitDir, existing.commitSha),
      created: false,
    };
  }
  if (!(await canControlTag(ctx, tagName, publisher.id))) {
    throw new Invalid(`release tag name is protected [tag_name: ${tagName}]`);
  }
  const commitSha = await resolveCommit(ctx.gitDir, target);
  if (!commitSha) throw new NotFound(`target "${target}" not found: object does not exist [id: ${target}]`);
  try {
    await createTag(ctx.gitDir, {
      name: tagName,
      commitSha,
      message,
      tagger: { name: publisher.name, email: publisher.email },
    });
  } catch (error) {
    if (error instanceof InvalidRefNameError)
      throw new Invalid(`tag name "${tagName}" is not a valid git tag name`);
    if (!(error instanceof TagExistsError)) throw error;
    // Pushed at the same moment by someone else: the tag exists, which is all a release needs.
    const raced = await getTag(ctx.gitDir, tagName);
    if (!raced) throw error;
    return {
      commitSha: raced.commitSha,
      numCommits: await countCommits(ctx.gitDir, raced.commitSha),
      created: false,
    };
  }
  return { commitSha, numCommits: await countCommits(ctx.gitDir, commitSha), created: true };
}

/** Records push_tag for a tag the forge created and publish_release for a release that became public. */
async function recordPublication(
  ctx: RepoContext,
  publisher: UserRow,
  release: { tagName: string; title: string },
  tag: TagOutcome | null,
): Promise<void> {
  const now = nowUnix();
  if (tag?.created) {
    const [head] = await commitsBetween(ctx.gitDir, ZERO_SHA, tag.commitSha, 1);
    await recordRepoAction(ctx.db, {
      opType: RepoActionType.PushTag,
      actor: publisher,
      repo: ctx.repo,
      owner: ctx.owner,
      refName: `refs/tags/${release.tagName}`,
      content: tagPushContent(head),
      createdUnix: now,
    });
  }
  await recordRepoAction(ctx.db, {
    opType: RepoActionType.PublishRelease,
    actor: publisher,
    repo: ctx.repo,
    owner: ctx.owner,
    refName: release.tagName,
    content: release.title,
    createdUnix: now,
  });
}

/** Removes a git tag this request created when the database step after it failed: no orphan tags. */
async function rollbackTag(ctx: RepoContext, tagName: string, tag: TagOutcome | null): Promise<void> {
  if (tag?.created) await deleteTag(ctx.gitDir, tagName);
}

/** Seed rules 4 and 5: create a release, or convert the tag-only record of its tag. */
export async function createRelease(ctx: RepoContext, input: CreateReleaseInput): Promise<ReleaseRow> {
  const publisher = requireDoer(ctx);
  if (ctx.repo.is_empty === 1) throw new Invalid('repo is empty');
  const tagName = input.tag_name;
  const existing = await findReleaseByTag(ctx.db, ctx.repo.id, tagName);
  if (existing) {
    if (existing.is_tag !== 1) throw new Conflict(`Release is has no Tag`);
    return convertTagRecord(ctx, publisher, existing, input);
  }
  const isDraft = input.draft ?? false;
  const target = input.target_commitish || ctx.repo.default_branch;
  const values: NewReleaseValues = {
    repoId: ctx.repo.id,
    publisherId: publisher.id,
    tagName,
    target,
    title: truncateTitle(input.name ?? ''),
    note: input.body ?? '',
    sha1: '',
    numCommits: 0,
    isDraft,
    isPrerelease: input.prerelease ?? false,
    isTag: false,
    createdUnix: nowUnix(),
  };
  // Checks that only read come first, so a refused request changes nothing.
  let existingTag: Awaited<ReturnType<typeof getTag>> = null;
  let commitSha = '';
  if (!isDraft) {
    existingTag = await getTag(ctx.gitDir, tagName);
    if (!existingTag) {
      if (!(await canControlTag(ctx, tagName, publisher.id))) {
        throw new Invalid(`release tag name is protected [tag_name: ${tagName}]`);
      }
      commitSha = (await resolveCommit(ctx.gitDir, target)) ?? '';
      if (!commitSha)
        throw new NotFound(`target "${target}" not found: object does not exist [id: ${target}]`);
    } else {
      commitSha = existingTag.commitSha;
    }
    values.sha1 = commitSha;
    values.numCommits = await countCommits(ctx.gitDir, commitSha);
  }
  // The row goes in first: the unique (repo, tag) index picks exactly one winner among concurrent
  // creators, and only the winner touches git.
  let row: ReleaseRow;
  try {
    row = await insertRelease(ctx.db, values);
  } catch (error) {
    if (isUniqueViolation(error)) throw new Conflict(`release tag already exist [tag_name: ${tagName}]`);
    throw error;
  }
  let tag: TagOutcome | null = null;
  if (!isDraft) {
    try {
      tag = await ensureTag(ctx, publisher, tagName, commitSha, input.tag_message ?? '');
    } catch (error) {
      await deleteReleaseRow(ctx.db, row.id);
      throw error;
    }
    await recordPublication(ctx, publisher, { tagName, title: values.title }, tag);
  }
  return row;
}

/** The tag-only → release transition: fields from the request, publisher = caller, target as given. */
async function convertTagRecord(
  ctx: RepoContext,
  publisher: UserRow,
  record: ReleaseRow,
  input: CreateReleaseInput,
): Promise<ReleaseRow> {
  const isDraft = input.draft ?? false;
  const target = input.target_commitish ?? '';
  let tag: TagOutcome | null = null;
  if (!isDraft) tag = await ensureTag(ctx, publisher, record.tag_name, target, input.tag_message ?? '');
  const values = {
    publisherId: publisher.id,
    tagName: record.tag_name,
    target,
    title: truncateTitle(input.name ?? ''),
    note: input.body ?? '',
    sha1: tag?.commitSha ?? record.sha1,
    numCommits: tag?.numCommits ?? record.num_commits,
    isDraft,
    isPrerelease: input.prerelease ?? false,
    isTag: false,
    createdUnix: tag?.created ? nowUnix() : record.created_unix,
  };
  // Only one of several concurrent converters finds the record still tag-only.
  const converted = await convertTagOnlyRecord(ctx.db, record.id, values);
  if (!converted) {
    await rollbackTag(ctx, record.tag_name, tag);
    throw new Conflict(`release tag already exist [tag_name: ${record.tag_name}]`);
  }
  if (!isDraft)
    await recordPublication(ctx, publisher, { tagName: record.tag_name, title: values.title }, tag);
  return (await findReleaseById(ctx.db, ctx.repo.id, record.id))!;
}

/** Seed rule 6: apply the fields the edit body marks as applied, create the tag of a published draft. */
export async function editRelease(
  ctx: RepoContext,
  id: number,
  input: EditReleaseInput,
): Promise<ReleaseRow> {
  const doer = requireDoer(ctx);
  const row = await getReleaseById(ctx, id);
  const next = {
    // The seed's publisher is whoever created or last published the release.
    publisherId: row.is_draft === 1 && input.draft === false ? doer.id : row.publisher_id,
    tagName: input.tag_name || row.tag_name,
    target: input.target_commitish || row.target,
    title: input.name ? truncateTitle(input.name) : row.title,
    note: input.body || row.note,
    sha1: row.sha1,
    numCommits: row.num_commits,
    isDraft: input.draft ?? row.is_draft === 1,
    isPrerelease: input.prerelease ?? row.is_prerelease === 1,
    isTag: false,
    createdUnix: row.created_unix,
  };
  let tag: TagOutcome | null = null;
  if (!next.isDraft) {
    tag = await ensureTag(ctx, doer, next.tagName, next.target, '');
    next.sha1 = tag.commitSha;
    next.numCommits = tag.numCommits;
    if (tag.created) next.createdUnix = nowUnix();
  }
  try {
    await updateRelease(ctx.db, row.id, next);
  } catch (error) {
    await rollbackTag(ctx, next.tagName, tag);
    if (isUniqueViolation(error)) throw new Conflict(`release tag already exist [tag_name: ${next.tagName}]`);
    throw error;
  }
  if (tag?.created) await recordPublication(ctx, doer, { tagName: next.tagName, title: next.title }, tag);
  return (await findReleaseById(ctx.db, ctx.repo.id, row.id))!;
}

/**
 * Seed rules 3 and 7: deleting a release keeps its git tag and turns the record back into a tag-only one;
 * a protected tag the caller may not control refuses with 422.
 */
export async function deleteRelease(ctx: RepoContext, row: ReleaseRow): Promise<void> {
  const doer = requireDoer(ctx);
  if (row.is_tag === 1) throw new NotFound();
  if (!(await canControlTag(ctx, row.tag_name, doer.id))) {
    throw new Invalid('user not allowed to delete protected tag');
  }
  await markReleaseTagOnly(ctx.db, row.id);
}
