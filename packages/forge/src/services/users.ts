import type { Static } from 'typebox';
import type { PathUser } from '../auth/context.js';
import { hashPassword, verifyPassword } from '../auth/secrets.js';
import { BadRequest, Invalid, NotFound } from '../errors.js';
import { type UserRow, UserType, type UserUpdate, Visibility } from '../store/schema.js';
import { searchUsers } from '../store/user-search.js';
import {
  countOwnedRepositories,
  countUsers,
  deleteUserCascade,
  emailInUse,
  findUserById,
  findUserByLowerName,
  findUsersByIds,
  insertUser,
  isOrgMember,
  listUsersByType,
  shareAnOrg,
  updateUser,
} from '../store/users.js';
import { visibilityFromName } from '../store/visibility.js';
import type { EditUserOptionSchema } from '../structs/user.js';
import { nowUnix, type ServiceContext } from './context.js';
import { assertValidEmail, assertValidOwnerName } from './names.js';
import { ghostUser, systemUserById } from './system-users.js';

export const MIN_PASSWORD_LENGTH = 8;

/**
 * What creating an account needs — the admin API (`CreateUserOption`, mapped by its route) and the CLI both
 * call with it, so it is the service's own shape, not a wire struct.
 */
export interface CreateUserInput {
  username: string;
  email: string;
  password: string;
  fullName?: string;
  loginName?: string;
  isAdmin?: boolean;
  mustChangePassword?: boolean;
  restricted?: boolean;
  visibility?: string;
}

/** Creates an active local user (Gitea `CreateUser` for the admin API and CLI). */
export async function createUser(ctx: ServiceContext, input: CreateUserInput): Promise<UserRow> {
  if (input.password.length < MIN_PASSWORD_LENGTH) throw new BadRequest('PasswordIsRequired');
  assertValidOwnerName(input.username);
  assertValidEmail(input.email);
  if (await findUserByLowerName(ctx.db, input.username.toLowerCase())) {
    throw new Invalid(`user already exists [name: ${input.username}]`);
  }
  if (await emailInUse(ctx.db, input.email))
    throw new Invalid(`e-mail already in use [email: ${input.email}]`);
  const secret = await hashPassword(input.password);
  const now = nowUnix();
  try {
    return await insertUser(ctx.db, {
      type: UserType.Individual,
      lower_name: input.username.toLowerCase(),
      name: input.username,
      full_name: input.fullName ?? '',
      email: input.email,
      passwd: secret.passwd,
      salt: secret.salt,
      passwd_hash_algo: secret.algo,
      login_name: input.loginName ?? '',
      is_admin: input.isAdmin ? 1 : 0,
      is_active: 1,
      must_change_password: input.mustChangePassword === false ? 0 : 1,
      is_restricted: input.restricted ? 1 : 0,
      visibility: visibilityFromName(input.visibility),
      created_unix: now,
      updated_unix: now,
    });
  } catch (error) {
    // Lost a race with a concurrent create of the same name: same answer as the check above.
    if (await findUserByLowerName(ctx.db, input.username.toLowerCase())) {
      throw new Invalid(`user already exists [name: ${input.username}]`);
    }
    throw error;
  }
}

/** Whether any individual user exists yet (first start creates an administrator when not). */
export async function hasUsers(ctx: ServiceContext): Promise<boolean> {
  return (await countUsers(ctx.db, UserType.Individual)) > 0;
}

/** Password sign-in: the user when name and password match, else null. */
export async function signInWithPassword(
  ctx: ServiceContext,
  name: string,
  password: string,
): Promise<UserRow | null> {
  const user = await findUserByLowerName(ctx.db, name.toLowerCase());
  if (!user || user.type !== UserType.Individual) {
    // Spend the same time as a real check so timing does not reveal which names exist.
    await verifyPassword(password, { passwd: '00'.repeat(32), salt: 'no-such-user' });
    return null;
  }
  return (await verifyPassword(password, user)) ? user : null;
}

/** Gitea's `IsUserVisibleToViewer`. */
export async function isUserVisibleToViewer(
  ctx: ServiceContext,
  target: UserRow,
  viewer: UserRow | null,
): Promise<boolean> {
  if (viewer && (viewer.is_admin || viewer.id === target.id)) return true;
  if (target.visibility === Visibility.Public) return true;
  if (!viewer || viewer.is_restricted) return false;
  if (target.visibility === Visibility.Limited) return true;
  // Private: visible to people who share an organization with the target (followers are not modelled).
  if (target.type === UserType.Organization) return isOrgMember(ctx.db, target.id, viewer.id);
  return shareAnOrg(ctx.db, target.id, viewer.id);
}

/** 404 body for a name that does not resolve: identical for absent and invisible users. */
export function userNotFound(name: string): NotFound {
  return new NotFound('GetUserByName', [`user redirect does not exist [name: ${name.toLowerCase()}]`]);
}

/** The user or organization named `name` (case-insensitive), or Gitea's 404. */
export async function getUserByName(ctx: ServiceContext, name: string): Promise<UserRow> {
  const user = await findUserByLowerName(ctx.db, name.toLowerCase());
  if (!user) throw userNotFound(name);
  return user;
}

/** `UserAssignmentAPI`: the user or organization named in the path (the viewer themself when it is them). */
export async function getContextUser(
  ctx: ServiceContext,
  name: string,
  viewer: UserRow | null,
  pathUser?: PathUser,
): Promise<UserRow> {
  const lowerName = name.toLowerCase();
  if (viewer && viewer.lower_name === lowerName) return viewer;
  // Read in this request's token lookup (PathUser), earlier in the same request: no second read.
  if (pathUser?.row !== undefined && pathUser.lowerName === lowerName) {
    if (!pathUser.row) throw userNotFound(name);
    return pathUser.row;
  }
  return getUserByName(ctx, name);
}

/**
 * `checkTokenPublicOnly` + `individualPermsChecker` + `IsUserVisibleToViewer`: the same 404 as for an
 * absent user when the target is hidden from the viewer, so existence is not revealed. A token limited to
 * public resources sees only public individuals (Gitea answers 403 there, which tells that the user
 * exists; the seed's users rule 4 wants 404).
 */
export async function assertUserVisible(
  ctx: ServiceContext,
  target: UserRow,
  viewer: UserRow | null,
  name: string,
  publicOnly = false,
) {
  if (target.type !== UserType.Organization) {
    if (publicOnly && target.visibility !== Visibility.Public) throw userNotFound(name);
    const selfOrAdmin = viewer !== null && (viewer.id === target.id || viewer.is_admin === 1);
    if (target.visibility === Visibility.Private && !selfOrAdmin) throw userNotFound(name);
    if (target.visibility === Visibility.Limited && !viewer) throw userNotFound(name);
  }
  if (!(await isUserVisibleToViewer(ctx, target, viewer))) throw userNotFound(name);
}

export interface UserSearchQuery {
  keyword: string;
  uid: number;
  publicOnly: boolean;
  page: { offset: number; limit: number };
  type?: number;
  visible?: number[];
}

/** A user or organization by id, or undefined. */
export function userById(ctx: ServiceContext, id: number): Promise<UserRow | undefined> {
  return findUserById(ctx.db, id);
}

/** An individual (non-organization) user by name, case-insensitively, or undefined. */
export async function individualByName(ctx: ServiceContext, name: string): Promise<UserRow | undefined> {
  const user = await findUserByLowerName(ctx.db, name.toLowerCase());
  return user && user.type === UserType.Individual ? user : undefined;
}

/**
 * Users by id for rendering rows that point at them (publishers, actors): ids that no longer resolve map
 * to the system user with that id or to Ghost, as Gitea's `LoadPublisher` / `LoadActUser` do.
 */
export async function usersForRows(
  ctx: ServiceContext,
  ids: readonly number[],
  /** Rows this request already read (a repository's owner, the caller): not read a second time. */
  loaded: readonly (UserRow | null)[] = [],
): Promise<(id: number) => UserRow> {
  const byId = new Map<number, UserRow>();
  for (const user of loaded) if (user) byId.set(user.id, user);
  const missing = [...new Set(ids)].filter((id) => id > 0 && !byId.has(id));
  for (const user of await findUsersByIds(ctx.db, missing)) byId.set(user.id, user);
  return (id) => byId.get(id) ?? systemUserById(id) ?? ghostUser();
}

/**
 * `GET /users/search` (Gitea's `user.Search`): `uid` of a system user (-1 Ghost, -2 actions) answers exactly
 * that user; anything else searches individuals visible to the viewer.
 */
export async function searchUsersForApi(
  ctx: ServiceContext,
  viewer: UserRow | null,
  query: UserSearchQuery,
): Promise<{ rows: UserRow[]; total: number }> {
  const system = systemUserById(query.uid);
  if (system) return { rows: [system], total: 1 };
  return searchVisibleUsers(ctx, viewer, query);
}

/** Gitea's user search for the API (individuals by default), restricted to what `viewer` may see. */
export function searchVisibleUsers(ctx: ServiceContext, viewer: UserRow | null, query: UserSearchQuery) {
  return searchUsers(ctx.db, ctx.dialect, {
    keyword: query.keyword.trim().toLowerCase(),
    type: query.type ?? UserType.Individual,
    uid: query.uid > 0 ? query.uid : undefined,
    visible: query.publicOnly ? [Visibility.Public] : query.visible,
    actor: viewer
      ? { id: viewer.id, isAdmin: viewer.is_admin === 1, isRestricted: viewer.is_restricted === 1 }
      : null,
    searchByEmail: true,
    offset: query.page.offset,
    limit: query.page.limit,
  });
}

/** Organizations in id order (for listings where search semantics are not wanted). */
export function listOrganizations(
  ctx: ServiceContext,
  page: { offset: number; limit: number },
  visible: number[],
) {
  return listUsersByType(ctx.db, UserType.Organization, page, visible);
}

/** `EditUserOption` as validated by the route. */
export type AdminEditUserInput = Static<typeof EditUserOptionSchema>;

/** `PATCH /admin/users/{username}`: applies the fields that are present. */
export async function adminEditUser(
  ctx: ServiceContext,
  user: UserRow,
  input: AdminEditUserInput,
): Promise<UserRow> {
  const patch: UserUpdate = {};
  const flag = (value: boolean | undefined) => (value === undefined ? undefined : value ? 1 : 0);
  if (input.email !== undefined && input.email !== '') {
    assertValidEmail(input.email);
    if (await emailInUse(ctx.db, input.email, user.id))
      throw new Invalid(`e-mail already in use [email: ${input.email}]`);
    patch.email = input.email;
  }
  if (input.password !== undefined && input.password !== '') {
    if (input.password.length < MIN_PASSWORD_LENGTH) throw new BadRequest('PasswordTooShort');
    const secret = await hashPassword(input.password);
    Object.assign(patch, { passwd: secret.passwd, salt: secret.salt, passwd_hash_algo: secret.algo });
  }
  for (const key of ['full_name', 'website', 'location', 'description', 'login_name'] as const) {
    if (input[key] !== undefined) patch[key] = input[key];
  }
  const flags = {
    must_change_password: flag(input.must_change_password),
    is_active: flag(input.active),
    is_admin: flag(input.admin),
    prohibit_login: flag(input.prohibit_login),
    is_restricted: flag(input.restricted),
    keep_email_private: flag(input.keep_email_private),
  };
  for (const [key, value] of Object.entries(flags)) {
    if (value !== undefined) (patch as Record<string, number>)[key] = value;
  }
  if (input.visibility !== undefined && input.visibility !== '')
    patch.visibility = visibilityFromName(input.visibility);
  patch.updated_unix = nowUnix();
  await updateUser(ctx.db, user.id, patch);
  return { ...user, ...patch } as UserRow;
}

/**
 * Gitea's `admin user change-password`: sets a new password for an existing individual user and whether
 * it must be changed at the next sign-in (default true, as Gitea's flag).
 */
export async function changeUserPassword(
  ctx: ServiceContext,
  input: { username: string; password: string; mustChangePassword?: boolean },
): Promise<UserRow> {
  const user = await findUserByLowerName(ctx.db, input.username.toLowerCase());
  if (!user || user.type !== UserType.Individual) {
    throw new NotFound(`user does not exist [name: ${input.username}]`);
  }
  if (input.password.length < MIN_PASSWORD_LENGTH) {
    throw new BadRequest(`password is shorter than ${MIN_PASSWORD_LENGTH} characters`);
  }
  const secret = await hashPassword(input.password);
  const patch: UserUpdate = {
    passwd: secret.passwd,
    salt: secret.salt,
    passwd_hash_algo: secret.algo,
    must_change_password: input.mustChangePassword === false ? 0 : 1,
    updated_unix: nowUnix(),
  };
  await updateUser(ctx.db, user.id, patch);
  return { ...user, ...patch } as UserRow;
}

/** How a user who must change their password gets it changed (forge has no web settings page). */
export function passwordChangeHint(ctx: ServiceContext, username: string): string {
  return (
    `You must change your password. An administrator can set a new one with ` +
    `\`forge admin user change-password --username ${username} --password <new password> --must-change-password=false\`` +
    ` or PATCH ${ctx.config.appUrl}api/v1/admin/users/${username} with {"password": "<new password>", "must_change_password": false}.`
  );
}

/** `DELETE /admin/users/{username}`: removes an individual user and what only they own. */
export async function adminDeleteUser(ctx: ServiceContext, user: UserRow): Promise<void> {
  if (user.type === UserType.Organization) throw new Invalid(`${user.name} is an organization not a user`);
  const owned = await countOwnedRepositories(ctx.db, user.id);
  if (owned > 0)
    throw new Invalid(`user still has ownership of repositories [uid: ${user.id}, count: ${owned}]`);
  await deleteUserCascade(ctx.db, user.id);
}

/** Records a successful sign-in. */
export async function touchLastLogin(ctx: ServiceContext, user: UserRow): Promise<void> {
  await updateUser(ctx.db, user.id, { last_login_unix: nowUnix() });
}
