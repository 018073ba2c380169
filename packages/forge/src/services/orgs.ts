import type { Static } from 'typebox';
import { Forbidden, Invalid, NotFound } from '../errors.js';
import { deleteOrganizationCascade, insertOrganization, listMemberOrganizations } from '../store/orgs.js';
import { AccessMode, type UserRow, UserType, type UserUpdate, Visibility } from '../store/schema.js';
import { UNITS } from '../store/units.js';
import {
  countOwnedRepositories,
  findUserByLowerName,
  hasOrgOwnerTeam,
  isOrgMember,
  updateUser,
} from '../store/users.js';
import { visibilityFromName } from '../store/visibility.js';
import type { CreateOrgOptionSchema, EditOrgOptionSchema } from '../structs/org.js';
import { nowUnix, type ServiceContext } from './context.js';
import { assertValidOwnerName } from './names.js';

export type CreateOrgInput = Static<typeof CreateOrgOptionSchema>;

/** Creates an organization owned by `creator` (with its Owners team), as Gitea's `CreateOrganization`. */
export async function createOrganization(
  ctx: ServiceContext,
  creator: UserRow,
  input: CreateOrgInput,
): Promise<UserRow> {
  assertValidOwnerName(input.username);
  if (await findUserByLowerName(ctx.db, input.username.toLowerCase())) {
    throw new Invalid(`user already exists [name: ${input.username}]`);
  }
  const now = nowUnix();
  return insertOrganization(
    ctx.db,
    {
      lower_name: input.username.toLowerCase(),
      name: input.username,
      full_name: input.full_name ?? '',
      email: input.email ?? '',
      description: input.description ?? '',
      website: input.website ?? '',
      location: input.location ?? '',
      visibility: visibilityFromName(input.visibility),
      repo_admin_change_team_access: input.repo_admin_change_team_access ? 1 : 0,
      is_active: 1,
      created_unix: now,
      updated_unix: now,
    },
    creator.id,
    {
      team: {
        lower_name: 'owners',
        name: 'Owners',
        authorize: AccessMode.Owner,
        includes_all_repositories: 1,
        can_create_org_repo: 1,
      },
      units: UNITS.map((u) => ({ type: u.type, access_mode: AccessMode.Owner })),
    },
  );
}

/** 404 for an organization name that does not resolve (or is hidden). */
export function orgNotFound(name: string): NotFound {
  return new NotFound('GetOrgByName', [`user redirect does not exist [name: ${name.toLowerCase()}]`]);
}

/** The organization named `name`, or Gitea's 404 (also when the name is an individual user). */
export async function getOrganization(ctx: ServiceContext, name: string): Promise<UserRow> {
  const org = await findUserByLowerName(ctx.db, name.toLowerCase());
  if (!org || org.type !== UserType.Organization) throw orgNotFound(name);
  return org;
}

/** Gitea's `HasOrgOrUserVisible`. */
export async function isOrgVisibleTo(
  ctx: ServiceContext,
  org: UserRow,
  viewer: UserRow | null,
): Promise<boolean> {
  if (!viewer) return org.visibility === Visibility.Public;
  if (viewer.is_admin || viewer.id === org.id) return true;
  if (org.visibility === Visibility.Private || viewer.is_restricted)
    return isOrgMember(ctx.db, org.id, viewer.id);
  return true;
}

/** Whether `user` is an owner of `orgId` (member of a team with owner access). */
export function isOrgOwner(ctx: ServiceContext, orgId: number, user: UserRow): Promise<boolean> {
  return hasOrgOwnerTeam(ctx.db, orgId, user.id);
}

/** `reqOrgOwnership` for an organization in context: site admins and owners pass, others get 403. */
export async function assertOrgOwner(ctx: ServiceContext, org: UserRow, doer: UserRow): Promise<void> {
  if (doer.is_admin) return;
  if (!(await isOrgOwner(ctx, org.id, doer))) throw new Forbidden('Must be an organization owner');
}

/**
 * `DELETE /orgs/{org}` (Gitea's org.DeleteOrganization): owners and site admins only; an organization
 * that still owns repositories is refused (Gitea's ErrUserOwnRepos). Its hooks go with it.
 */
export async function deleteOrganization(ctx: ServiceContext, org: UserRow, doer: UserRow): Promise<void> {
  await assertOrgOwner(ctx, org, doer);
  const owned = await countOwnedRepositories(ctx.db, org.id);
  if (owned > 0) throw new Invalid(`user still has ownership of repositories [uid: ${org.id}]`);
  await deleteOrganizationCascade(ctx.db, org.id);
}

/** `reqOrgMembership` for an organization in context. */
export async function assertOrgMember(ctx: ServiceContext, org: UserRow, doer: UserRow): Promise<void> {
  if (doer.is_admin) return;
  if (!(await isOrgMember(ctx.db, org.id, doer.id))) throw new Forbidden('Must be an organization member');
}

export type EditOrgInput = Static<typeof EditOrgOptionSchema>;

/** `PATCH /orgs/{org}`: applies the fields that are present. */
export async function editOrganization(
  ctx: ServiceContext,
  org: UserRow,
  input: EditOrgInput,
): Promise<UserRow> {
  const patch: UserUpdate = {};
  for (const key of ['full_name', 'email', 'description', 'website', 'location'] as const) {
    if (input[key] !== undefined) patch[key] = input[key];
  }
  if (input.visibility !== undefined && input.visibility !== '')
    patch.visibility = visibilityFromName(input.visibility);
  if (input.repo_admin_change_team_access !== undefined) {
    patch.repo_admin_change_team_access = input.repo_admin_change_team_access ? 1 : 0;
  }
  patch.updated_unix = nowUnix();
  await updateUser(ctx.db, org.id, patch);
  return { ...org, ...patch } as UserRow;
}

/** Gitea's `listUserOrgs`: hidden memberships only for the user themself and site admins. */
export function listUserOrganizations(
  ctx: ServiceContext,
  user: UserRow,
  viewer: UserRow | null,
  page: { offset: number; limit: number },
) {
  const showHidden = viewer !== null && (viewer.is_admin === 1 || viewer.id === user.id);
  return listMemberOrganizations(
    ctx.db,
    user.id,
    {
      includeHiddenMemberships: showHidden,
      viewer: viewer
        ? { id: viewer.id, isAdmin: viewer.is_admin === 1, isRestricted: viewer.is_restricted === 1 }
        : null,
    },
    page,
  );
}
