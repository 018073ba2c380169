import type { ForgeConfig } from '../config.js';
import type { AttachmentRow } from '../store/schema.js';
import type { Attachment } from '../structs/release.js';
import { rfc3339 } from './time.js';

/**
 * Gitea's `convert.ToAPIAttachment`: the API's download link is `<AppURL>attachments/<uuid>` (the
 * `/{owner}/{repo}/releases/download/{tag}/{name}` form is served too, for links built by hand).
 */
export function toAttachment(config: ForgeConfig, row: AttachmentRow): Attachment {
  return {
    id: row.id,
    name: row.name,
    size: row.size,
    download_count: row.download_count,
    created_at: rfc3339(row.created_unix),
    uuid: row.uuid,
    browser_download_url: `${config.appUrl}attachments/${row.uuid}`,
  };
}
