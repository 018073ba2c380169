/** The op types of recorded actions (Gitea `ActionType`) and their API names. */

/** Op types of actions (Gitea `ActionType`), by name. */
export const ActionType = {
  CreateRepo: 1,
  RenameRepo: 2,
  StarRepo: 3,
  WatchRepo: 4,
  CommitRepo: 5,
  CreateIssue: 6,
  CreatePullRequest: 7,
  TransferRepo: 8,
  PushTag: 9,
  CommentIssue: 10,
  DeleteTag: 16,
  DeleteBranch: 17,
  PublishRelease: 24,
} as const;

const OP_TYPE_NAMES = [
  '',
  'create_repo',
  'rename_repo',
  'star_repo',
  'watch_repo',
  'commit_repo',
  'create_issue',
  'create_pull_request',
  'transfer_repo',
  'push_tag',
  'comment_issue',
  'merge_pull_request',
  'close_issue',
  'reopen_issue',
  'close_pull_request',
  'reopen_pull_request',
  'delete_tag',
  'delete_branch',
  'mirror_sync_push',
  'mirror_sync_create',
  'mirror_sync_delete',
  'approve_pull_request',
  'reject_pull_request',
  'comment_pull',
  'publish_release',
  'pull_review_dismissed',
  'pull_request_ready_for_review',
  'auto_merge_pull_request',
];

/** `ActionType.String()`; unknown numbers render as `action-<n>`. */
export function opTypeName(opType: number): string {
  return OP_TYPE_NAMES[opType] || `action-${opType}`;
}
