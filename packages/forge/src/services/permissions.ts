import type { Kysely } from 'kysely';
import { loadAccessRows, userTeamIds } from '../store/repo-access.js';
import { type Database, type RepositoryRow, type UserRow, UserType } from '../store/schema.js';
import { computeRepoPermission, NO_PERMISSION, type RepoPermission } from './repo-permission.js';

export { UnitType } from '../store/units.js';
export { RepoPermission } from './repo-permission.js';

/** A user's permission on a repository (Gitea's GetUserRepoPermission), read from the database. */
export async function getRepoPermission(
  db: Kysely<Database>,
  repo: RepositoryRow,
  owner: UserRow,
  user: UserRow | null,
): Promise<RepoPermission> {
  const isOrganization = owner.type === UserType.Organization;
  const rows = user
    ? await loadAccessRows(db, { id: repo.id, ownerId: repo.owner_id }, isOrganization, user.id)
    : { collaborationMode: null, isOrgMember: false, teams: [] };
  if (user && (user.is_active === 0 || user.prohibit_login === 1)) return NO_PERMISSION;
  return computeRepoPermission({
    user: user ? { id: user.id, isAdmin: user.is_admin === 1, isRestricted: user.is_restricted === 1 } : null,
    repo: { ownerId: repo.owner_id, isPrivate: repo.is_private === 1 },
    owner: { isOrganization, visibility: owner.visibility },
    isOrgMember: rows.isOrgMember,
    collaborationMode: rows.collaborationMode,
    teams: rows.teams,
  });
}

/** Team ids of `user` in the repository's owning organisation (empty for user-owned repositories). */
export async function teamIdsInOwner(
  db: Kysely<Database>,
  owner: UserRow,
  userId: number,
): Promise<number[]> {
  return owner.type === UserType.Organization ? userTeamIds(db, owner.id, userId) : [];
}
