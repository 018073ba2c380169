import type { DefaultFlag, DefaultNumber, DefaultText, Id } from './columns.js';

/** `user.type` values (Gitea `UserType`). */
export const UserType = { Individual: 0, Organization: 1, Bot: 4 } as const;

/** `user.visibility` values (Gitea `VisibleType`). */
export const Visibility = { Public: 0, Limited: 1, Private: 2 } as const;

/** Access modes shared by teams, collaborators and keys (Gitea `perm.AccessMode`). */
export const AccessMode = { None: 0, Read: 1, Write: 2, Admin: 3, Owner: 4 } as const;

/** `public_key.type` values (Gitea `KeyType`). */
export const KeyType = { User: 1, Deploy: 2, Principal: 3 } as const;

export interface UserTable {
  id: Id;
  type: DefaultNumber;
  lower_name: string;
  name: string;
  full_name: DefaultText;
  email: DefaultText;
  keep_email_private: DefaultFlag;
  /** scrypt hash (hex) of the password; empty for organizations. */
  passwd: DefaultText;
  passwd_hash_algo: DefaultText;
  salt: DefaultText;
  login_source: DefaultNumber;
  login_name: DefaultText;
  location: DefaultText;
  website: DefaultText;
  description: DefaultText;
  language: DefaultText;
  avatar: DefaultText;
  is_admin: DefaultFlag;
  is_active: DefaultFlag;
  prohibit_login: DefaultFlag;
  must_change_password: DefaultFlag;
  is_restricted: DefaultFlag;
  visibility: DefaultNumber;
  keep_activity_private: DefaultFlag;
  repo_admin_change_team_access: DefaultFlag;
  num_followers: DefaultNumber;
  num_following: DefaultNumber;
  num_stars: DefaultNumber;
  created_unix: number;
  updated_unix: number;
  last_login_unix: DefaultNumber;
}

export interface OrgUserTable {
  id: Id;
  org_id: number;
  uid: number;
  is_public: DefaultFlag;
}

export interface TeamTable {
  id: Id;
  org_id: number;
  lower_name: string;
  name: string;
  description: DefaultText;
  /** AccessMode of the team as a whole. */
  authorize: number;
  includes_all_repositories: DefaultFlag;
  can_create_org_repo: DefaultFlag;
}

export interface TeamUnitTable {
  id: Id;
  org_id: number;
  team_id: number;
  /** Gitea unit type number (1 code, 2 issues, 3 pulls, 4 releases, 5 wiki, …). */
  type: number;
  access_mode: number;
}

export interface TeamUserTable {
  id: Id;
  org_id: number;
  team_id: number;
  uid: number;
}

export interface TeamRepoTable {
  id: Id;
  org_id: number;
  team_id: number;
  repo_id: number;
}

export interface AccessTokenTable {
  id: Id;
  uid: number;
  name: string;
  /** hex sha256(salt + token); the token itself is never stored. */
  token_hash: string;
  token_salt: string;
  token_last_eight: string;
  /** Normalised scope string (see auth/scopes.ts). */
  scope: string;
  /** 1: the token reaches only its access_token_repository rows (none left: no repository at all). */
  repo_scoped: DefaultFlag;
  created_unix: number;
  updated_unix: number;
}

/** A repository a repository-scoped token may reach (no rows: the token is not limited). */
export interface AccessTokenRepositoryTable {
  token_id: number;
  repo_id: number;
}

export interface PublicKeyTable {
  id: Id;
  owner_id: number;
  name: string;
  /** `SHA256:<base64>` for SSH keys; empty for principals. */
  fingerprint: string;
  /** authorized_keys line for keys, the principal name for principals. */
  content: string;
  mode: number;
  type: number;
  created_unix: number;
  updated_unix: number;
}

export interface WebSessionTable {
  /** hex sha256 of the session cookie value. */
  id_hash: string;
  uid: number;
  created_unix: number;
  expires_unix: number;
}
