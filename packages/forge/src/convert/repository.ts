import type { ForgeConfig } from '../config.js';
import type { GitBranch } from '../git/repository.js';
import type { RepoPermission } from '../services/repo-permission.js';
import type { RepositoryView } from '../services/repo-views.js';
import type { RepositoryRow, UserRow } from '../store/schema.js';
import { UnitType } from '../store/units.js';
import type { Branch, Repository } from '../structs/repo.js';
import { GO_ZERO_TIME, rfc3339 } from './time.js';
import { toUser } from './user.js';

/** `<AppURL><owner>/<repo>`: the repository's web address, base of html/archive links. */
export function repoHtmlUrl(config: ForgeConfig, owner: UserRow, repo: RepositoryRow): string {
  return `${config.appUrl}${encodeURIComponent(owner.name)}/${encodeURIComponent(repo.name)}`;
}

/** `<AppURL>api/v1/repos/<owner>/<repo>`. */
export function repoApiUrl(config: ForgeConfig, owner: UserRow, repo: RepositoryRow): string {
  return `${config.appUrl}api/v1/repos/${encodeURIComponent(owner.name)}/${encodeURIComponent(repo.name)}`;
}

/** Go's `util.PathEscapeSegments`: escapes each `/`-separated segment, keeping the slashes. */
export function pathEscapeSegments(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

/** Gitea's `convert.ToRepo` for the fields the forge backs; `permissions` are the viewer's. */
export function toRepository(
  config: ForgeConfig,
  repo: RepositoryRow,
  owner: UserRow,
  viewer: UserRow | null,
  permission: RepoPermission,
  counts: { releases: number },
): Repository {
  const html = repoHtmlUrl(config, owner, repo);
  const api = repoApiUrl(config, owner, repo);
  return {
    id: repo.id,
    owner: toUser(config, owner, viewer),
    name: repo.name,
    full_name: `${owner.name}/${repo.name}`,
    description: repo.description,
    empty: repo.is_empty === 1,
    private: repo.is_private === 1,
    fork: false,
    template: false,
    parent: null,
    mirror: false,
    size: 0,
    language: '',
    languages_url: `${api}/languages`,
    html_url: html,
    url: api,
    link: `/${encodeURIComponent(owner.name)}/${encodeURIComponent(repo.name)}`,
    // No SSH server: clones go over smart HTTP.
    ssh_url: '',
    clone_url: `${html}.git`,
    original_url: '',
    website: repo.website,
    stars_count: 0,
    forks_count: 0,
    watchers_count: 0,
    open_issues_count: 0,
    open_pr_counter: 0,
    release_counter: counts.releases,
    default_branch: repo.default_branch,
    archived: repo.is_archived === 1,
    created_at: rfc3339(repo.created_unix),
    updated_at: rfc3339(repo.updated_unix),
    archived_at: rfc3339(0),
    permissions: {
      admin: permission.isAdmin(),
      push: permission.canWrite(UnitType.Code),
      pull: permission.canRead(UnitType.Code),
    },
    has_code: true,
    // Issues, wiki, pull requests, projects, packages and actions are not forge features: their flags are
    // off, and the merge settings are the values Gitea sends for a repository without the pulls unit.
    has_issues: false,
    internal_tracker: null,
    external_tracker: null,
    has_wiki: false,
    external_wiki: null,
    has_pull_requests: false,
    has_projects: false,
    projects_mode: 'all',
    has_releases: true,
    has_packages: false,
    has_actions: false,
    ignore_whitespace_conflicts: false,
    allow_merge_commits: false,
    allow_rebase: false,
    allow_rebase_explicit: false,
    allow_squash_merge: false,
    allow_fast_forward_only_merge: false,
    allow_rebase_update: false,
    allow_manual_merge: false,
    autodetect_manual_merge: false,
    default_delete_branch_after_merge: false,
    default_merge_style: 'merge',
    default_allow_maintainer_edit: false,
    avatar_url: '',
    internal: false,
    mirror_interval: '',
    object_format_name: 'sha1',
    mirror_updated: GO_ZERO_TIME,
    repo_transfer: null,
    topics: [],
    licenses: [],
  };
}

/** A gathered repository view rendered for its viewer. */
export function toRepositoryView(
  config: ForgeConfig,
  view: RepositoryView,
  viewer: UserRow | null,
): Repository {
  return toRepository(config, view.repo, view.owner, viewer, view.permission, {
    releases: view.releaseCount,
  });
}

/** Git's strict ISO dates (`+00:00`) as Go's RFC 3339 (`Z` for UTC). */
export function gitDateToRfc3339(date: string): string {
  const ms = Date.parse(date);
  return Number.isNaN(ms) ? date : rfc3339(Math.floor(ms / 1000));
}

/** Gitea's `convert.ToBranch` for an unprotected branch. */
export function toBranch(
  config: ForgeConfig,
  owner: UserRow,
  repo: RepositoryRow,
  branch: GitBranch,
  permission: RepoPermission,
): Branch {
  const canPush = permission.canWrite(UnitType.Code);
  return {
    name: branch.name,
    commit: {
      id: branch.commitSha,
      message: branch.message,
      url: `${repoHtmlUrl(config, owner, repo)}/commit/${branch.commitSha}`,
      author: { name: branch.authorName, email: branch.authorEmail, username: '' },
      committer: { name: branch.committerName, email: branch.committerEmail, username: '' },
      verification: {
        verified: false,
        reason: 'gpg.error.not_signed_commit',
        signature: '',
        signer: null,
        payload: '',
      },
      timestamp: gitDateToRfc3339(branch.commitDate),
      added: null,
      removed: null,
      modified: null,
    },
    protected: false,
    required_approvals: 0,
    enable_status_check: false,
    status_check_contexts: [],
    user_can_push: canPush,
    user_can_merge: canPush,
    effective_branch_protection_name: '',
  };
}
