import type { Kysely, Transaction } from 'kysely';
import { compiledQuery } from './compiled-query.js';
import type { AttachmentRow, Database } from './schema.js';

type Db = Kysely<Database> | Transaction<Database>;

/** Values of a new attachment row. */
export interface NewAttachmentValues {
  uuid: string;
  repoId: number;
  releaseId: number;
  uploaderId: number;
  name: string;
  size: number;
  createdUnix: number;
}

export function insertAttachment(db: Db, values: NewAttachmentValues): Promise<AttachmentRow> {
  return db
    .insertInto('attachment')
    .values({
      uuid: values.uuid,
      repo_id: values.repoId,
      release_id: values.releaseId,
      uploader_id: values.uploaderId,
      name: values.name,
      size: values.size,
      created_unix: values.createdUnix,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findAttachmentById(db: Db, id: number): Promise<AttachmentRow | undefined> {
  return db.selectFrom('attachment').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findAttachmentByUuid(db: Db, uuid: string): Promise<AttachmentRow | undefined> {
  return db.selectFrom('attachment').selectAll().where('uuid', '=', uuid).executeTakeFirst();
}

const attachmentsOfReleases = compiledQuery((db, releaseIds: readonly number[]) =>
  db
    .selectFrom('attachment')
    .selectAll()
    .where('release_id', 'in', releaseIds)
    .orderBy('release_id')
    .orderBy('id'),
);

/**
 * The attachments of several releases in one query, oldest first per release (Gitea orders by id).
 * Compiled once per number of releases: a page has at most the configured maximum.
 */
export function listAttachmentsOfReleases(db: Db, releaseIds: readonly number[]): Promise<AttachmentRow[]> {
  if (releaseIds.length === 0) return Promise.resolve([]);
  return attachmentsOfReleases(db, releaseIds);
}

/** The attachment of a release with this exact file name (the first one when names repeat). */
export function findAttachmentByReleaseAndName(
  db: Db,
  releaseId: number,
  name: string,
): Promise<AttachmentRow | undefined> {
  return db
    .selectFrom('attachment')
    .selectAll()
    .where('release_id', '=', releaseId)
    .where('name', '=', name)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
}

export async function renameAttachment(db: Db, id: number, name: string): Promise<void> {
  await db.updateTable('attachment').set({ name }).where('id', '=', id).execute();
}

/** Counts one download in the database itself, so concurrent downloads never lose a count. */
export async function incrementDownloadCount(db: Db, id: number): Promise<void> {
  await db
    .updateTable('attachment')
    .set((eb) => ({ download_count: eb('download_count', '+', 1) }))
    .where('id', '=', id)
    .execute();
}

/** Deletes one row; false when it was already gone. */
export async function deleteAttachmentRow(db: Db, id: number): Promise<boolean> {
  const result = await db.deleteFrom('attachment').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Deletes the rows of a release and returns their uuids (whose files the caller removes). */
export async function deleteAttachmentsOfRelease(db: Db, releaseId: number): Promise<string[]> {
  const rows = await db
    .deleteFrom('attachment')
    .where('release_id', '=', releaseId)
    .returning('uuid')
    .execute();
  return rows.map((row) => row.uuid);
}

/** Uuids of every attachment of a repository (files to remove when the repository goes). */
export async function listAttachmentUuidsOfRepo(db: Db, repoId: number): Promise<string[]> {
  const rows = await db.selectFrom('attachment').select('uuid').where('repo_id', '=', repoId).execute();
  return rows.map((row) => row.uuid);
}

/** Which of these uuids have a row (the start-up sweep keeps only their files). */
export async function existingAttachmentUuids(db: Db, uuids: readonly string[]): Promise<Set<string>> {
  if (uuids.length === 0) return new Set();
  const rows = await db.selectFrom('attachment').select('uuid').where('uuid', 'in', uuids).execute();
  return new Set(rows.map((row) => row.uuid));
}
