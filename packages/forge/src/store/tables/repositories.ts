import type { DefaultFlag, DefaultNumber, DefaultText, Id } from './columns.js';

export interface RepositoryTable {
  id: Id;
  owner_id: number;
  owner_name: string;
  lower_name: string;
  name: string;
  description: DefaultText;
  website: DefaultText;
  is_private: DefaultFlag;
  is_empty: DefaultFlag;
  is_archived: DefaultFlag;
  default_branch: DefaultText;
  created_unix: number;
  updated_unix: number;
}

export interface CollaborationTable {
  id: Id;
  repo_id: number;
  user_id: number;
  mode: number;
  created_unix: number;
  updated_unix: number;
}

export interface ProtectedTagTable {
  id: Id;
  repo_id: number;
  name_pattern: string;
  /** JSON array of user ids. */
  allowlist_user_ids: DefaultText;
  /** JSON array of team ids. */
  allowlist_team_ids: DefaultText;
  created_unix: number;
  updated_unix: number;
}

export interface ReleaseTable {
  id: Id;
  repo_id: number;
  publisher_id: number;
  tag_name: string;
  lower_tag_name: string;
  target: DefaultText;
  title: DefaultText;
  sha1: DefaultText;
  num_commits: DefaultNumber;
  note: DefaultText;
  is_draft: DefaultFlag;
  is_prerelease: DefaultFlag;
  is_tag: DefaultFlag;
  created_unix: number;
}

/** Release records (tag-only ones excluded) per repository and flags, kept by triggers (migration 010). */
export interface ReleaseCountTable {
  repo_id: number;
  is_draft: number;
  is_prerelease: number;
  total: number;
}

/** A release attachment; its file lives under `<data-dir>/attachments/` by uuid. */
export interface AttachmentTable {
  id: Id;
  uuid: string;
  repo_id: number;
  release_id: number;
  uploader_id: number;
  name: string;
  download_count: DefaultNumber;
  size: number;
  created_unix: number;
}
