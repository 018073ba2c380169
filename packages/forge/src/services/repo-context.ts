import type { RepositoryRow, UserRow } from '../store/schema.js';
import type { ServiceContext } from './context.js';
import type { RepoPermission } from './repo-permission.js';

/** One request's view of a repository: rows, git directory, caller and the caller's permission. */
export interface RepoContext extends ServiceContext {
  gitDir: string;
  repo: RepositoryRow;
  owner: UserRow;
  doer: UserRow | null;
  permission: RepoPermission;
}

/** The caller of a route that requires sign-in (reqToken runs before every writing route). */
export function requireDoer(ctx: RepoContext): UserRow {
  if (!ctx.doer) throw new Error('route reached without a signed-in caller');
  return ctx.doer;
}
