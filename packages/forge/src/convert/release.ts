import type { ForgeConfig } from '../config.js';
import type { GitTag } from '../git/repository.js';
import type { NamedTagProtection } from '../services/protected-tags.js';
import type { ReleaseRow, RepositoryRow, UserRow } from '../store/schema.js';
import type { Attachment, Release, Tag, TagProtection } from '../structs/release.js';
import type { User } from '../structs/user.js';
import { gitDateToRfc3339, pathEscapeSegments, repoApiUrl, repoHtmlUrl } from './repository.js';
import { rfc3339 } from './time.js';

/**
 * Gitea's `convert.ToAPIRelease`: links from the app URL, created_at = published_at = created_unix,
 * assets in upload order. `author` is the publisher rendered with no viewer (`toUser(config, publisher, null)`), so the
 * e-mail is the placeholder.
 */
export function toRelease(
  config: ForgeConfig,
  owner: UserRow,
  repo: RepositoryRow,
  row: ReleaseRow,
  author: User,
  assets: Attachment[],
): Release {
  const html = repoHtmlUrl(config, owner, repo);
  const url = `${repoApiUrl(config, owner, repo)}/releases/${row.id}`;
  const tagPath = pathEscapeSegments(row.tag_name);
  const created = rfc3339(row.created_unix);
  return {
    id: row.id,
    tag_name: row.tag_name,
    target_commitish: row.target,
    name: row.title,
    body: row.note,
    url,
    html_url: `${html}/releases/tag/${tagPath}`,
    tarball_url: `${html}/archive/${tagPath}.tar.gz`,
    zipball_url: `${html}/archive/${tagPath}.zip`,
    upload_url: `${url}/assets`,
    draft: row.is_draft === 1,
    prerelease: row.is_prerelease === 1,
    created_at: created,
    published_at: created,
    author,
    assets,
  };
}

/** Gitea's `convert.ToTag` (message trimmed as Gitea does). */
export function toTag(config: ForgeConfig, owner: UserRow, repo: RepositoryRow, tag: GitTag): Tag {
  const html = repoHtmlUrl(config, owner, repo);
  const tagPath = pathEscapeSegments(tag.name);
  return {
    name: tag.name,
    message: tag.message.trim(),
    id: tag.objectSha,
    commit: {
      url: `${repoApiUrl(config, owner, repo)}/git/commits/${tag.commitSha}`,
      sha: tag.commitSha,
      created: gitDateToRfc3339(tag.commitDate),
    },
    zipball_url: `${html}/archive/${tagPath}.zip`,
    tarball_url: `${html}/archive/${tagPath}.tar.gz`,
  };
}

/** Gitea's `convert.ToTagProtection`. */
export function toTagProtection(protection: NamedTagProtection): TagProtection {
  return {
    id: protection.id,
    name_pattern: protection.namePattern,
    whitelist_usernames: protection.userNames,
    whitelist_teams: protection.teamNames,
    created_at: rfc3339(protection.createdUnix),
    updated_at: rfc3339(protection.updatedUnix),
  };
}
