import { hash } from 'node:crypto';
import type { ForgeConfig } from '../config.js';
import type { UserRow } from '../store/schema.js';
import { visibilityName } from '../store/visibility.js';
import type { User } from '../structs/user.js';
import { GO_ZERO_TIME, rfc3339 } from './time.js';

/** Avatar link: the uploaded avatar when there is one, else one derived from the e-mail (or name). */
export function avatarUrl(
  config: ForgeConfig,
  user: Pick<UserRow, 'id' | 'avatar' | 'email' | 'lower_name'>,
): string {
  // The virtual Ghost and Actions users have Gitea's default avatar.
  if (user.id < 0) return `${config.appUrl}assets/img/avatar_default.png`;
  // One-shot `hash`: every user in an answer needs it, and it costs less than a Hash object.
  const seed = user.avatar || hash('md5', (user.email || user.lower_name).toLowerCase(), 'hex');
  return `${config.appUrl}avatars/${seed}`;
}

/** `<lower_name>@<no-reply address>`, shown instead of a real e-mail to those who may not see it. */
export function placeholderEmail(config: ForgeConfig, user: Pick<UserRow, 'lower_name'>): string {
  return `${user.lower_name}@${config.service.noReplyAddress}`;
}

/**
 * Gitea's `convert.ToUser`: private fields only for the user themself or a site admin; the real e-mail
 * only for signed-in viewers and, when the user keeps it private, only for self/admin.
 */
export function toUser(config: ForgeConfig, user: UserRow, viewer: UserRow | null): User {
  const privileged = viewer !== null && (viewer.id === user.id || viewer.is_admin === 1);
  const email =
    viewer !== null && (!user.keep_email_private || privileged) ? user.email : placeholderEmail(config, user);
  return {
    id: user.id,
    login: user.name,
    login_name: privileged ? user.login_name : '',
    source_id: privileged ? user.login_source : 0,
    full_name: user.full_name,
    email,
    avatar_url: avatarUrl(config, user),
    html_url: `${config.appUrl}${encodeURIComponent(user.name)}`,
    language: privileged ? user.language : '',
    is_admin: privileged ? user.is_admin === 1 : false,
    last_login: privileged ? rfc3339(user.last_login_unix) : GO_ZERO_TIME,
    created: rfc3339(user.created_unix),
    restricted: user.is_restricted === 1,
    active: privileged ? user.is_active === 1 : false,
    prohibit_login: privileged ? user.prohibit_login === 1 : false,
    location: user.location,
    website: user.website,
    description: user.description,
    visibility: visibilityName(user.visibility),
    followers_count: user.num_followers,
    following_count: user.num_following,
    starred_repos_count: user.num_stars,
    username: user.name,
  };
}
