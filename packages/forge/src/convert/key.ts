import type { ForgeConfig } from '../config.js';
import { AccessMode, type PublicKeyRow, type UserRow } from '../store/schema.js';
import type { PublicKey } from '../structs/key.js';
import { rfc3339 } from './time.js';
import { toUser } from './user.js';

/** Gitea's `convert.ToPublicKey`; `owner` is included only for the owner themself or a site admin. */
export function toPublicKey(
  config: ForgeConfig,
  key: PublicKeyRow,
  owner: UserRow | null,
  viewer: UserRow,
): PublicKey {
  return {
    id: key.id,
    key: key.content,
    url: `${config.appUrl}api/v1/user/keys/${key.id}`,
    title: key.name,
    fingerprint: key.fingerprint,
    created_at: rfc3339(key.created_unix),
    ...(owner ? { user: toUser(config, owner, viewer) } : {}),
    ...(key.mode === AccessMode.Read ? { read_only: true } : {}),
    key_type: 'user',
  };
}
