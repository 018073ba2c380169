/**
 * Release attachments (Gitea's routers/api/v1/repo/release_attachment.go, services/attachment,
 * routers/web/repo/attachment.go): every read goes through the release read rule of releases.ts, so a
 * draft's assets — listed, fetched by id or downloaded by link — exist only for those who may see the
 * draft (GHSA-q9pg-jj6x-j9p6).
 */
import type { Readable } from 'node:stream';
import { BadRequest, Invalid, NotFound, PayloadTooLarge } from '../errors.js';
import {
  deleteAttachmentRow,
  findAttachmentById,
  findAttachmentByReleaseAndName,
  findAttachmentByUuid,
  incrementDownloadCount,
  insertAttachment,
  listAttachmentsOfReleases,
  renameAttachment,
} from '../store/attachments.js';
import { findReleaseById } from '../store/releases.js';
import { findRepositoryById } from '../store/repositories.js';
import type { AttachmentRow, ReleaseRow, UserRow } from '../store/schema.js';
import { UnitType } from '../store/units.js';
import { findUserById } from '../store/users.js';
import {
  FileRefusedError,
  FileTooLargeError,
  openAttachmentFile,
  placeUpload,
  receiveUpload,
  removeAttachmentFiles,
  UploadInterruptedError,
} from './attachment-files.js';
import { FORBIDDEN_TYPE_MESSAGE, isAllowedType, servedContentType } from './content-types.js';
import { nowUnix, type ServiceContext } from './context.js';
import { canReadRelease, getReleaseById, getReleaseByTag } from './releases.js';
import type { RepoContext } from './repo-context.js';
import { requireDoer } from './repo-context.js';
import { loadRepoContext } from './repos.js';
import { assertTokenReaches, type TokenRepositories } from './token-repositories.js';

/** The attachments of a page of releases, by release id, in one query. */
export async function attachmentsOfReleases(
  ctx: ServiceContext,
  releaseIds: readonly number[],
): Promise<Map<number, AttachmentRow[]>> {
  const byRelease = new Map<number, AttachmentRow[]>(releaseIds.map((id) => [id, []]));
  for (const row of await listAttachmentsOfReleases(ctx.db, releaseIds))
    byRelease.get(row.release_id)?.push(row);
  return byRelease;
}

/** GET …/releases/{id}/assets: the release under the read rule, then its attachments. */
export async function listReleaseAttachments(ctx: RepoContext, releaseId: number): Promise<AttachmentRow[]> {
  const release = await getReleaseById(ctx, releaseId);
  return (await attachmentsOfReleases(ctx, [release.id])).get(release.id) ?? [];
}

/** An attachment of a readable release of this repository; 404 when either does not match. */
export async function getReleaseAttachment(
  ctx: RepoContext,
  releaseId: number,
  attachmentId: number,
): Promise<AttachmentRow> {
  const release = await getReleaseById(ctx, releaseId);
  const row = await findAttachmentById(ctx.db, attachmentId);
  if (!row || row.release_id !== release.id || row.repo_id !== ctx.repo.id) throw new NotFound();
  return row;
}

/** The release an upload goes to: attachments enabled, the release readable by the (writing) caller. */
export async function releaseForUpload(ctx: RepoContext, releaseId: number): Promise<ReleaseRow> {
  if (!ctx.config.attachment.enabled) throw new NotFound('attachment is not enabled');
  return getReleaseById(ctx, releaseId);
}

/**
 * POST …/releases/{id}/assets: streams `content` to disk within the size limit, checking its type from
 * the first bytes, then records it. A refused, oversized or interrupted upload leaves no file and no row.
 */
export async function uploadReleaseAttachment(
  ctx: RepoContext,
  release: ReleaseRow,
  upload: { name: string; content: Readable },
): Promise<AttachmentRow> {
  const uploader = requireDoer(ctx);
  if (upload.name === '') throw new BadRequest('Could not determine name of attachment.');
  const { maxSizeBytes, allowedTypes } = ctx.config.attachment;
  let received: Awaited<ReturnType<typeof receiveUpload>>;
  try {
    received = await receiveUpload(ctx, upload.content, {
      maxBytes: maxSizeBytes,
      checkHead: async (head) => {
        if (!(await isAllowedType(head, upload.name, allowedTypes))) {
          throw new FileRefusedError(FORBIDDEN_TYPE_MESSAGE);
        }
      },
    });
  } catch (error) {
    if (error instanceof FileTooLargeError)
      throw new PayloadTooLarge(`attachment exceeds limit ${maxSizeBytes}`);
    if (error instanceof FileRefusedError) throw new BadRequest(error.message);
    // Nobody is left to read the answer; a client error keeps it out of the server's error log.
    if (error instanceof UploadInterruptedError) throw new BadRequest(error.message);
    throw error;
  }
  const uuid = await placeUpload(ctx, received);
  try {
    return await insertAttachment(ctx.db, {
      uuid,
      repoId: ctx.repo.id,
      releaseId: release.id,
      uploaderId: uploader.id,
      name: upload.name,
      size: received.size,
      createdUnix: nowUnix(),
    });
  } catch (error) {
    await removeAttachmentFiles(ctx, [uuid]);
    throw error;
  }
}

/** PATCH …/assets/{attachment_id}: a non-empty name renames; a name of a forbidden type is 422. */
export async function editReleaseAttachment(
  ctx: RepoContext,
  releaseId: number,
  attachmentId: number,
  input: { name?: string },
): Promise<AttachmentRow> {
  const row = await getReleaseAttachment(ctx, releaseId, attachmentId);
  if (!input.name) return row;
  if (!(await isAllowedType(null, input.name, ctx.config.attachment.allowedTypes))) {
    throw new Invalid(FORBIDDEN_TYPE_MESSAGE);
  }
  await renameAttachment(ctx.db, row.id, input.name);
  return { ...row, name: input.name };
}

/** DELETE …/assets/{attachment_id}: the row, then the file. */
export async function deleteReleaseAttachment(
  ctx: RepoContext,
  releaseId: number,
  attachmentId: number,
): Promise<void> {
  const row = await getReleaseAttachment(ctx, releaseId, attachmentId);
  if (await deleteAttachmentRow(ctx.db, row.id)) await removeAttachmentFiles(ctx, [row.uuid]);
}

/** A download about to be served: what to send and how to describe it. */
export interface AttachmentDownload {
  row: AttachmentRow;
  size: number;
  contentType: string;
  open: () => Readable;
}

/** Download rules shared by both links: release readable under the read rule, then the file. */
async function prepareDownload(
  ctx: RepoContext,
  row: AttachmentRow,
  release: ReleaseRow | undefined,
  count: boolean,
): Promise<AttachmentDownload> {
  if (!ctx.permission.canRead(UnitType.Releases) && ctx.doer?.is_admin !== 1) throw new NotFound();
  if (!release || !canReadRelease(ctx, release)) throw new NotFound();
  const file = await openAttachmentFile(ctx, row.uuid).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') throw new NotFound();
    throw error;
  });
  if (count) await incrementDownloadCount(ctx.db, row.id);
  return { row, size: file.size, contentType: await servedContentType(file.head), open: file.stream };
}

/**
 * `/attachments/{uuid}`: the attachment's repository must be visible to the caller (404 otherwise, as
 * for a missing uuid), its releases unit readable and its release readable.
 */
export async function openDownloadByUuid(
  ctx: ServiceContext,
  uuid: string,
  doer: UserRow | null,
  options: { count: boolean; publicOnly: boolean; repositories: TokenRepositories },
): Promise<AttachmentDownload> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(uuid)) throw new NotFound();
  const row = await findAttachmentByUuid(ctx.db, uuid);
  if (!row) throw new NotFound();
  const repo = await findRepositoryById(ctx.db, row.repo_id);
  const owner = repo ? await findUserById(ctx.db, repo.owner_id) : undefined;
  if (!repo || !owner) throw new NotFound();
  const repoCtx = await loadRepoContext(ctx, owner.name, repo.name, doer);
  assertTokenReaches(options.repositories, repo);
  if (options.publicOnly && repo.is_private === 1) throw new NotFound();
  const release = await findReleaseById(ctx.db, repo.id, row.release_id);
  return prepareDownload(repoCtx, row, release, options.count);
}

/** `/{owner}/{repo}/releases/download/{tag}/{name}`: the release by tag (same read rule), then the file. */
export async function openDownloadByTag(
  ctx: RepoContext,
  tag: string,
  name: string,
  options: { count: boolean },
): Promise<AttachmentDownload> {
  const release = await getReleaseByTag(ctx, tag);
  const row = await findAttachmentByReleaseAndName(ctx.db, release.id, name);
  if (!row) throw new NotFound();
  return prepareDownload(ctx, row, release, options.count);
}
