/**
 * Removing attachments together with what they belong to. Kept apart from attachments.ts (which reads
 * releases through releases.ts) so releases.ts and repos.ts can call it without an import cycle.
 */
import { existingAttachmentUuids, listAttachmentUuidsOfRepo } from '../store/attachments.js';
import { listPlacedFiles, removeAttachmentFiles } from './attachment-files.js';
import type { ServiceContext } from './context.js';

/** Uuids of a repository's attachment files, read before its rows are deleted. */
export function repoAttachmentUuids(ctx: ServiceContext, repoId: number): Promise<string[]> {
  return listAttachmentUuidsOfRepo(ctx.db, repoId);
}

/**
 * Removes placed files that no row points at: what a crash between placing an upload and recording it
 * (or between deleting rows and their files) leaves. Only files older than `minAgeMs`, since another
 * forge process sharing the data directory may be between those two steps right now.
 */
export async function removeOrphanAttachmentFiles(
  ctx: ServiceContext,
  minAgeMs = 60 * 60 * 1000,
): Promise<number> {
  const files = await listPlacedFiles(ctx, Date.now() - minAgeMs);
  let removed = 0;
  for (let i = 0; i < files.length; i += 500) {
    const batch = files.slice(i, i + 500);
    const known = await existingAttachmentUuids(ctx.db, batch);
    const orphans = batch.filter((uuid) => !known.has(uuid));
    await removeAttachmentFiles(ctx, orphans);
    removed += orphans.length;
  }
  return removed;
}

export { removeAttachmentFiles };
