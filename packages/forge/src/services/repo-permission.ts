/**
 * Gitea's repository permission model (models/perm/access/repo_permission.go), free of storage: an overall
 * access mode plus, for organisation repositories, a mode per unit derived from teams.
 */
import { AccessMode } from '../store/schema.js';
import { UNITS } from '../store/units.js';

/** Every repository has every unit enabled: the forge does not model disabling units. */
export const REPO_UNITS: readonly number[] = UNITS.map((unit) => unit.type);

/** What a user may do in one repository. */
export class RepoPermission {
  constructor(
    readonly accessMode: number,
    /** Per-unit modes for organisation repositories; null means "accessMode on every unit". */
    readonly unitsMode: ReadonlyMap<number, number> | null,
  ) {}

  /** Mode on one unit. */
  unitAccessMode(unit: number): number {
    if (this.unitsMode === null) return REPO_UNITS.includes(unit) ? this.accessMode : AccessMode.None;
    return this.unitsMode.get(unit) ?? AccessMode.None;
  }

  canRead(unit: number): boolean {
    return this.unitAccessMode(unit) >= AccessMode.Read;
  }

  canWrite(unit: number): boolean {
    return this.unitAccessMode(unit) >= AccessMode.Write;
  }

  isAdmin(): boolean {
    return this.accessMode >= AccessMode.Admin;
  }

  isOwner(): boolean {
    return this.accessMode >= AccessMode.Owner;
  }

  /** Whether the repository is visible at all (Gitea's HasAnyUnitAccess): else it answers 404. */
  hasAnyUnitAccess(): boolean {
    if (this.unitsMode === null) return this.accessMode >= AccessMode.Read;
    for (const mode of this.unitsMode.values()) if (mode >= AccessMode.Read) return true;
    return false;
  }
}

export const NO_PERMISSION = new RepoPermission(AccessMode.None, null);

/** Facts about a user, a repository and its owner from which the permission follows. */
export interface PermissionFacts {
  user: { id: number; isAdmin: boolean; isRestricted: boolean } | null;
  repo: { ownerId: number; isPrivate: boolean };
  /** visibility: 0 public, 1 limited, 2 private. */
  owner: { isOrganization: boolean; visibility: number };
  /** The user belongs to the owning organisation (any team). */
  isOrgMember: boolean;
  /** Mode of the user's collaboration row on this repository, if any. */
  collaborationMode: number | null;
  /** The user's teams in the owning organisation that cover this repository. */
  teams: ReadonlyArray<{ accessMode: number; units: ReadonlyMap<number, number> }>;
}

/** Whether the owner itself is visible to the user (Gitea's HasOrgOrUserVisible). */
function ownerVisible(facts: PermissionFacts): boolean {
  const { user, owner, repo } = facts;
  if (owner.visibility === 0) return true;
  if (!user) return false;
  if (user.isAdmin || user.id === repo.ownerId) return true;
  if (owner.visibility === 1) return !user.isRestricted || facts.isOrgMember;
  return owner.isOrganization && facts.isOrgMember;
}

/** Computes a user's permission on a repository exactly as Gitea's GetUserRepoPermission. */
export function computeRepoPermission(facts: PermissionFacts): RepoPermission {
  const { user, repo } = facts;
  if (!user && repo.isPrivate) return NO_PERMISSION;
  const isCollaborator = facts.collaborationMode !== null;
  if (!ownerVisible(facts) && !isCollaborator) return NO_PERMISSION;
  if (!user) return new RepoPermission(AccessMode.Read, null);
  if (user.isAdmin || user.id === repo.ownerId) return new RepoPermission(AccessMode.Owner, null);

  // accessLevel: public read for non-restricted users, then the best of collaboration and team modes.
  let mode: number = !repo.isPrivate && !user.isRestricted ? AccessMode.Read : AccessMode.None;
  if (facts.collaborationMode !== null) mode = Math.max(mode, facts.collaborationMode);
  for (const team of facts.teams) mode = Math.max(mode, Math.min(team.accessMode, AccessMode.Owner));
  if (!facts.owner.isOrganization) return new RepoPermission(mode, null);

  if (facts.teams.some((team) => team.accessMode >= AccessMode.Admin)) {
    return new RepoPermission(AccessMode.Owner, null);
  }
  const unitsMode = new Map<number, number>();
  if (isCollaborator) for (const unit of REPO_UNITS) unitsMode.set(unit, mode);
  for (const unit of REPO_UNITS) {
    let found = false;
    for (const team of facts.teams) {
      const teamMode = team.units.get(unit) ?? AccessMode.None;
      if (teamMode > AccessMode.None) {
        if ((unitsMode.get(unit) ?? AccessMode.None) < teamMode) unitsMode.set(unit, teamMode);
        found = true;
      }
    }
    // On a public org repository a non-restricted user reads every unit no team defines.
    if (!found && !repo.isPrivate && !user.isRestricted && !unitsMode.has(unit)) {
      unitsMode.set(unit, AccessMode.Read);
    }
  }
  return new RepoPermission(mode, unitsMode);
}
