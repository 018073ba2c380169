/**
 * Release events as the release service raises them: `published` when a release becomes public
 * (created non-draft, converted from a tag, or a draft published), `updated` when a public release
 * changes, `deleted` when a public release goes. Drafts never fire. Built inside the transaction of
 * the release write, from the rows that transaction sees.
 */
import type { Transaction } from 'kysely';
import { toAttachment } from '../convert/attachment.js';
import type { RepoContext } from '../services/repo-context.js';
import { ghostUser } from '../services/system-users.js';
import { listAttachmentsOfReleases } from '../store/attachments.js';
import { countReleases } from '../store/releases.js';
import type { Database, ReleaseRow, UserRow } from '../store/schema.js';
import { findUserById } from '../store/users.js';
import { raiseHookEvents } from './outbox.js';
import { releaseEvent } from './payloads.js';

export type ReleaseAction = 'published' | 'updated' | 'deleted';

/** Records the deliveries of one release event in `trx` (nothing for drafts). */
export async function raiseReleaseEvent(
  trx: Transaction<Database>,
  ctx: RepoContext,
  sender: UserRow,
  action: ReleaseAction,
  row: ReleaseRow,
): Promise<void> {
  if (row.is_draft === 1 || row.is_tag === 1) return;
  const publisher =
    row.publisher_id === sender.id ? sender : ((await findUserById(trx, row.publisher_id)) ?? ghostUser());
  const assets =
    action === 'deleted'
      ? []
      : (await listAttachmentsOfReleases(trx, [row.id])).map((a) => toAttachment(ctx.config, a));
  const releaseCount = await countReleases(trx, { repoId: ctx.repo.id, includeDrafts: false });
  await raiseHookEvents(trx, [
    releaseEvent(ctx.config, { repo: ctx.repo, owner: ctx.owner, releaseCount }, sender, action, {
      row,
      publisher,
      assets,
    }),
  ]);
}
