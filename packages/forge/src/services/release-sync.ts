/**
 * Bringing release records in line with the git tags of a repository, as Gitea's `SyncReleasesWithTags`
 * (modules/repository/repo.go) and its admin command `repo-sync-releases`. Every write path orders git
 * before the database so that a crash leaves only states this repairs:
 * - a tag without a record (tag created or pushed, row not yet written) gets a tag-only record;
 * - a tag-only record whose tag is gone (tag deleted, row not yet) is removed;
 * - a release whose tag is gone becomes a draft with no commit (Gitea's PushUpdateDeleteTag), so it can
 *   be published again, which re-creates the tag;
 * - a record whose tag moved gets the tag's commit.
 * Drafts without a tag are fine as they are: a draft has no tag until it is published.
 */
import { existsSync } from 'node:fs';
import type { Kysely } from 'kysely';
import { countCommits, type GitTag, getTag, listTags } from '../git/repository.js';
import { isUniqueViolation } from '../store/constraint-errors.js';
import {
  deleteReleaseRow,
  findReleaseByTag,
  insertRelease,
  listAllReleaseRecords,
  updateRelease,
} from '../store/releases.js';
import { listRepositoriesWithOwners } from '../store/repositories.js';
import type { Database, RepositoryRow, UserRow } from '../store/schema.js';
import type { ServiceContext } from './context.js';
import { gitDirOf } from './repos.js';

/** One repository's database and git directory. */
export interface TagSyncContext {
  db: Kysely<Database>;
  gitDir: string;
  repo: RepositoryRow;
  owner: UserRow;
}

/** What a sync changed in one repository. */
export interface ReleaseSyncReport {
  repository: string;
  /** Tag-only records created for tags that had none. */
  added: number;
  /** Tag-only records removed because their tag is gone. */
  removed: number;
  /** Releases turned into drafts because their tag is gone. */
  drafted: number;
  /** Records whose commit followed a moved tag. */
  updated: number;
  /** Why the repository was skipped (no git directory), if it was. */
  skipped?: string;
}

/**
 * Creates or refreshes the record of one tag (Gitea's pushUpdateAddTag): a tag-only record when there is
 * none, else the record's commit follows the tag. `publisherId` is who a new tag-only record names.
 */
export async function syncTagRecord(
  ctx: TagSyncContext,
  name: string,
  publisherId = ctx.owner.id,
  known?: GitTag,
): Promise<'added' | 'updated' | 'unchanged'> {
  const tag = known ?? (await getTag(ctx.gitDir, name));
  if (!tag) return 'unchanged';
  const existing = await findReleaseByTag(ctx.db, ctx.repo.id, name);
  if (existing && existing.sha1 === tag.commitSha) return 'unchanged';
  const numCommits = await countCommits(ctx.gitDir, tag.commitSha);
  if (!existing) {
    try {
      await insertRelease(ctx.db, {
        repoId: ctx.repo.id,
        publisherId,
        tagName: name,
        target: '',
        title: '',
        note: '',
        sha1: tag.commitSha,
        numCommits,
        isDraft: false,
        isPrerelease: false,
        isTag: true,
        createdUnix: tag.createdUnix,
      });
    } catch (error) {
      // A release created for the same tag at the same moment (or a tag differing only in case) owns it.
      if (!isUniqueViolation(error)) throw error;
      return 'unchanged';
    }
    return 'added';
  }
  // Two git tags differing only in case share one record; it follows the one it names.
  if (existing.tag_name !== name) return 'unchanged';
  await updateRelease(ctx.db, existing.id, {
    publisherId: existing.is_tag === 1 ? publisherId : existing.publisher_id,
    tagName: existing.tag_name,
    target: existing.target,
    title: existing.title,
    note: existing.note,
    sha1: tag.commitSha,
    numCommits,
    isDraft: existing.is_draft === 1,
    isPrerelease: existing.is_prerelease === 1,
    isTag: existing.is_tag === 1,
    createdUnix: existing.is_tag === 1 ? tag.createdUnix : existing.created_unix,
  });
  return 'updated';
}

/** Gitea's SyncReleasesWithTags for one repository. */
export async function syncReleasesWithTags(ctx: TagSyncContext): Promise<ReleaseSyncReport> {
  const report: ReleaseSyncReport = {
    repository: `${ctx.owner.name}/${ctx.repo.name}`,
    added: 0,
    removed: 0,
    drafted: 0,
    updated: 0,
  };
  // A repository whose row was written but whose git directory was not (a crash during creation).
  if (!existsSync(ctx.gitDir)) return { ...report, skipped: 'no git directory' };
  const tags = new Map((await listTags(ctx.gitDir)).map((tag) => [tag.name, tag]));
  for (const record of await listAllReleaseRecords(ctx.db, ctx.repo.id)) {
    if (tags.has(record.tag_name)) continue;
    // The tag may have been created since the listing: look again before repairing.
    if (await getTag(ctx.gitDir, record.tag_name)) continue;
    if (record.is_tag === 1) {
      await deleteReleaseRow(ctx.db, record.id);
      report.removed += 1;
    } else if (record.is_draft !== 1 || record.sha1 !== '') {
      await updateRelease(ctx.db, record.id, {
        publisherId: record.publisher_id,
        tagName: record.tag_name,
        target: record.target,
        title: record.title,
        note: record.note,
        sha1: '',
        numCommits: 0,
        isDraft: true,
        isPrerelease: record.is_prerelease === 1,
        isTag: false,
        createdUnix: record.created_unix,
      });
      report.drafted += 1;
    }
  }
  for (const tag of tags.values()) {
    const outcome = await syncTagRecord(ctx, tag.name, ctx.owner.id, tag);
    if (outcome === 'added') report.added += 1;
    if (outcome === 'updated') report.updated += 1;
  }
  return report;
}

/**
 * Syncs every repository, or the one named `owner/repo` (case-insensitive); an unknown name is an
 * error. Used at start-up and by `forge admin repo-sync-releases`.
 */
export async function syncAllReleases(ctx: ServiceContext, only?: string): Promise<ReleaseSyncReport[]> {
  let repos = await listRepositoriesWithOwners(ctx.db);
  if (only !== undefined) {
    const wanted = only.toLowerCase();
    repos = repos.filter(({ owner, repo }) => `${owner.lower_name}/${repo.lower_name}` === wanted);
    if (repos.length === 0) throw new Error(`repository ${only} does not exist`);
  }
  const reports: ReleaseSyncReport[] = [];
  for (const { owner, repo } of repos) {
    reports.push(await syncReleasesWithTags({ db: ctx.db, gitDir: gitDirOf(ctx, owner, repo), repo, owner }));
  }
  return reports;
}
