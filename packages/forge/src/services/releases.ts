/**
 * The seed's Releases rules 1–7 and the tag-only → release transition, with Gitea's behaviour where the
 * seed is silent (routers/api/v1/repo/release.go, services/release/release.go).
 */

import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import { Conflict, Invalid, NotFound } from '../errors.js';
import { isUniqueViolation } from '../store/constraint-errors.js';
import {
  convertTagOnlyRecord,
  countReleases,
  findLatestRelease,
  findReleaseById,
  findReleaseByTag,
  insertRelease,
  listReleases as listReleaseRows,
  type NewReleaseValues,
  retireRelease,
  updateRelease,
} from '../store/releases.js';
import {
  AccessMode,
  type AttachmentRow,
  type Database,
  type ReleaseRow,
  type UserRow,
} from '../store/schema.js';
import type { CreateReleaseOptionSchema, EditReleaseOptionSchema } from '../structs/release.js';
import { inTransactionWithHooks, wakeDeliveryWorkers } from '../webhooks/outbox.js';
import type { HookEventRecord } from '../webhooks/payloads.js';
import { raiseReleaseEvent } from '../webhooks/release-events.js';
import { removeAttachmentFiles } from './attachment-removal.js';
import { nowUnix } from './context.js';
import { UnitType } from './permissions.js';
import { canControlTag } from './protected-tags.js';
import {
  ensureTag,
  raiseTagEvents,
  recordPublication,
  recordTagOnly,
  type TagOutcome,
  tagHookEvents,
} from './release-tag.js';
import { type RepoContext, requireDoer } from './repo-context.js';
import { ghostUser, systemUserById } from './system-users.js';

/** CreateReleaseOption. */
export type CreateReleaseInput = Static<typeof CreateReleaseOptionSchema>;

/** EditReleaseOption: strings apply when non-empty, booleans when present. */
export type EditReleaseInput = Static<typeof EditReleaseOptionSchema>;

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

/** Seed rule 1: one filtered page, the filtered total and the page's attachments. */
export async function listReleases(
  ctx: RepoContext,
  query: { draft?: boolean; prerelease?: boolean; limit: number; offset: number },
): Promise<{ rows: ReleaseRow[]; total: number; attachments: Map<number, AttachmentRow[]> }> {
  const filter = {
    repoId: ctx.repo.id,
    includeDrafts: canSeeDrafts(ctx),
    draft: query.draft,
    prerelease: query.prerelease,
  };
  const page = await listReleaseRows(ctx.db, ctx.dialect, filter, {
    limit: query.limit,
    offset: query.offset,
  });
  // The page's statement tells the total unless the page is empty; an empty first page is a total of 0.
  const total = page.total ?? (query.offset === 0 ? 0 : await countReleases(ctx.db, filter));
  return { rows: page.rows, total, attachments: page.attachments };
}

/** Gitea's `NumReleases`: published (non-draft) releases, shown as `release_counter`. */
export function countPublishedReleases(db: Kysely<Database>, repoId: number): Promise<number> {
  return countReleases(db, { repoId, includeDrafts: false });
}

/**
 * Seed rule 2: newest published, non-prerelease release, else 404; with its publisher (a deleted one
 * becomes the system user of that id or Ghost, as `usersForRows` does) and its attachments.
 */
export async function getLatestRelease(
  ctx: RepoContext,
): Promise<{ release: ReleaseRow; publisher: UserRow; attachments: AttachmentRow[] }> {
  const found = await findLatestRelease(ctx.db, ctx.repo.id);
  if (!found) throw new NotFound();
  const { release, publisher, attachments } = found;
  return {
    release,
    publisher: publisher ?? systemUserById(release.publisher_id) ?? ghostUser(),
    attachments,
  };
}

/**
 * The one rule for reading a single release record (by id, by tag, and the edit/delete paths, and
 * anything hanging off a release such as its assets): tag-only records are not releases, and a draft
 * exists only for writers of the repository or its releases unit and for its publisher. Everyone else
 * gets the same 404 as for a missing id, so sequential ids do not enumerate drafts (CVE-2026-27660,
 * fixed in Gitea 1.25.5).
 */
export function canReadRelease(ctx: RepoContext, row: ReleaseRow): boolean {
  if (row.is_tag === 1) return false;
  if (row.is_draft !== 1) return true;
  return canSeeDrafts(ctx) || (ctx.doer !== null && ctx.doer.id === row.publisher_id);
}

function readable(ctx: RepoContext, row: ReleaseRow | undefined): ReleaseRow {
  if (!row || !canReadRelease(ctx, row)) throw new NotFound();
  return row;
}

/** Seed rule 3: a release of this repository by id; tag-only records and hidden drafts are 404. */
export async function getReleaseById(ctx: RepoContext, id: number): Promise<ReleaseRow> {
  return readable(ctx, await findReleaseById(ctx.db, ctx.repo.id, id));
}

/** A release by tag name, under the same rule as by id. */
export async function getReleaseByTag(ctx: RepoContext, tagName: string): Promise<ReleaseRow> {
  return readable(ctx, await findReleaseByTag(ctx.db, ctx.repo.id, tagName));
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
  // Git first, then the row (Gitea's services/release/release.go): a crash in between leaves a tag
  // without a record, which the next sync turns into a tag-only record; never a release without its tag.
  // Of several concurrent creators the unique (repo, tag) index still picks exactly one winner.
  let tag: TagOutcome | null = null;
  if (!isDraft) {
    // ensureTag refuses (protected name, unknown target) before it writes anything.
    tag = await ensureTag(ctx, publisher, tagName, target, input.tag_message ?? '');
    values.sha1 = tag.commitSha;
    values.numCommits = tag.numCommits;
  }
  try {
    const tagEvents: HookEventRecord[] = await tagHookEvents(ctx, publisher, tagName, tag);
    let row: ReleaseRow;
    try {
      // The release row and its webhook deliveries commit together.
      row = await inTransactionWithHooks(ctx.db, async (trx) => {
        const inserted = await insertRelease(trx, values);
        await raiseTagEvents(trx, tag, tagEvents);
        await raiseReleaseEvent(trx, ctx, publisher, 'published', inserted);
        return inserted;
      });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      // A sync (push, start-up, admin command) may have recorded our new tag as tag-only in between: that
      // record becomes the release, as if it had been there first. Any other record means 409.
      const raced = await findReleaseByTag(ctx.db, ctx.repo.id, tagName);
      if (raced?.is_tag === 1)
        return convertTagRecord(ctx, publisher, raced, { ...input, target_commitish: target });
      throw new Conflict(`release tag already exist [tag_name: ${tagName}]`);
    }
    if (!isDraft) await recordPublication(ctx, publisher, { tagName, title: values.title }, tag);
    return row;
  } finally {
    // A journal not closed by a committed transaction stays for the repair; its lease stops here.
    tag?.journal?.release();
  }
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
  // Only one of several concurrent converters finds the record still tag-only. A tag this request made
  // stays: the winner's release may already rely on it.
  try {
    const tagEvents = await tagHookEvents(ctx, publisher, record.tag_name, tag);
    const converted = await inTransactionWithHooks(ctx.db, async (trx) => {
      if (!(await convertTagOnlyRecord(trx, record.id, values))) return false;
      await raiseTagEvents(trx, tag, tagEvents);
      await raiseReleaseEvent(
        trx,
        ctx,
        publisher,
        'published',
        (await findReleaseById(trx, ctx.repo.id, record.id))!,
      );
      return true;
    });
    if (!converted) throw new Conflict(`release tag already exist [tag_name: ${record.tag_name}]`);
    if (!isDraft)
      await recordPublication(ctx, publisher, { tagName: record.tag_name, title: values.title }, tag);
    return (await findReleaseById(ctx.db, ctx.repo.id, record.id))!;
  } finally {
    // A journal not closed by a committed transaction stays for the repair; its lease stops here.
    tag?.journal?.release();
  }
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
  // A new tag name taken by another record is refused before git is touched.
  if (next.tagName.toLowerCase() !== row.tag_name.toLowerCase()) {
    if (await findReleaseByTag(ctx.db, ctx.repo.id, next.tagName)) {
      throw new Conflict(`release tag already exist [tag_name: ${next.tagName}]`);
    }
  }
  // Git first, then the row: a crash in between leaves a tag the next sync records (see createRelease).
  let tag: TagOutcome | null = null;
  if (!next.isDraft) {
    tag = await ensureTag(ctx, doer, next.tagName, next.target, '');
    next.sha1 = tag.commitSha;
    next.numCommits = tag.numCommits;
    if (tag.created) next.createdUnix = nowUnix();
  }
  try {
    const tagEvents = await tagHookEvents(ctx, doer, next.tagName, tag);
    try {
      await inTransactionWithHooks(ctx.db, async (trx) => {
        await updateRelease(trx, row.id, next);
        await raiseTagEvents(trx, tag, tagEvents);
        // Publishing a draft is `published`; a change to a public release is `updated`; drafts never fire.
        if (!next.isDraft) {
          const updated = (await findReleaseById(trx, ctx.repo.id, row.id))!;
          await raiseReleaseEvent(trx, ctx, doer, row.is_draft === 1 ? 'published' : 'updated', updated);
        }
      });
    } catch (error) {
      if (tag?.created) await recordTagOnly(ctx, next.tagName);
      if (isUniqueViolation(error))
        throw new Conflict(`release tag already exist [tag_name: ${next.tagName}]`);
      throw error;
    }
    if (tag?.created) await recordPublication(ctx, doer, { tagName: next.tagName, title: next.title }, tag);
    return (await findReleaseById(ctx.db, ctx.repo.id, row.id))!;
  } finally {
    // A journal not closed by a committed transaction stays for the repair; its lease stops here.
    tag?.journal?.release();
  }
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
  // Gitea deletes a release's attachments with it (the tag-only record that remains has none): rows in
  // the same transaction, files after it.
  const uuids = await retireRelease(ctx.db, row.id, (trx) =>
    raiseReleaseEvent(trx, ctx, doer, 'deleted', row),
  );
  wakeDeliveryWorkers();
  await removeAttachmentFiles(ctx, uuids);
}
