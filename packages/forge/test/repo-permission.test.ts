import { describe, expect, it } from 'vitest';
import { computeRepoPermission, type PermissionFacts } from '../src/services/repo-permission.js';
import { AccessMode } from '../src/store/schema.js';
import { UnitType } from '../src/store/units.js';

const user = { id: 10, isAdmin: false, isRestricted: false };
const base: PermissionFacts = {
  user,
  repo: { ownerId: 1, isPrivate: false },
  owner: { isOrganization: true, visibility: 0 },
  isOrgMember: false,
  collaborationMode: null,
  teams: [],
};
const units = (entries: Array<[number, number]>) => new Map(entries);

/** Gitea's GetUserRepoPermission cases the HTTP tests do not reach one by one. */
describe('computeRepoPermission', () => {
  it('anonymous: public read, private nothing, hidden owner nothing', () => {
    expect(computeRepoPermission({ ...base, user: null }).canRead(UnitType.Code)).toBe(true);
    expect(computeRepoPermission({ ...base, user: null }).canWrite(UnitType.Code)).toBe(false);
    expect(
      computeRepoPermission({
        ...base,
        user: null,
        repo: { ownerId: 1, isPrivate: true },
      }).hasAnyUnitAccess(),
    ).toBe(false);
    const limitedOwner = { ...base, user: null, owner: { isOrganization: true, visibility: 1 } };
    expect(computeRepoPermission(limitedOwner).hasAnyUnitAccess()).toBe(false);
  });

  it('the owner and site admins are owners', () => {
    expect(computeRepoPermission({ ...base, user: { ...user, id: 1 } }).isOwner()).toBe(true);
    expect(computeRepoPermission({ ...base, user: { ...user, isAdmin: true } }).isOwner()).toBe(true);
  });

  it('restricted users do not get the public read fallback', () => {
    const restricted = { ...base, user: { ...user, isRestricted: true } };
    expect(computeRepoPermission(restricted).hasAnyUnitAccess()).toBe(false);
    expect(
      computeRepoPermission({ ...restricted, collaborationMode: AccessMode.Read }).canRead(UnitType.Code),
    ).toBe(true);
  });

  it('a private organisation hides its public repositories from non-members, not from collaborators', () => {
    const privateOrg = { ...base, owner: { isOrganization: true, visibility: 2 } };
    expect(computeRepoPermission(privateOrg).hasAnyUnitAccess()).toBe(false);
    expect(computeRepoPermission({ ...privateOrg, isOrgMember: true }).canRead(UnitType.Code)).toBe(true);
    expect(
      computeRepoPermission({ ...privateOrg, collaborationMode: AccessMode.Write }).canWrite(UnitType.Code),
    ).toBe(true);
  });

  it('team unit modes per unit; the best team wins; admin teams make owners', () => {
    const facts: PermissionFacts = {
      ...base,
      repo: { ownerId: 1, isPrivate: true },
      isOrgMember: true,
      teams: [
        { accessMode: AccessMode.Read, units: units([[UnitType.Code, AccessMode.Read]]) },
        { accessMode: AccessMode.Write, units: units([[UnitType.Releases, AccessMode.Write]]) },
      ],
    };
    const perm = computeRepoPermission(facts);
    expect(perm.canRead(UnitType.Code)).toBe(true);
    expect(perm.canWrite(UnitType.Code)).toBe(false);
    expect(perm.canWrite(UnitType.Releases)).toBe(true);
    expect(perm.canRead(UnitType.Wiki)).toBe(false);
    const admin = computeRepoPermission({
      ...facts,
      teams: [{ accessMode: AccessMode.Admin, units: units([]) }],
    });
    expect(admin.isOwner()).toBe(true);
    expect(admin.canWrite(UnitType.Wiki)).toBe(true);
  });

  it('on a public organisation repository, units no team defines stay readable', () => {
    const perm = computeRepoPermission({
      ...base,
      isOrgMember: true,
      teams: [{ accessMode: AccessMode.Write, units: units([[UnitType.Code, AccessMode.Write]]) }],
    });
    expect(perm.canWrite(UnitType.Code)).toBe(true);
    expect(perm.canRead(UnitType.Releases)).toBe(true);
    expect(perm.canWrite(UnitType.Releases)).toBe(false);
  });

  it('an organisation collaborator gets its mode on every unit', () => {
    const perm = computeRepoPermission({
      ...base,
      repo: { ownerId: 1, isPrivate: true },
      collaborationMode: AccessMode.Write,
    });
    expect(perm.canWrite(UnitType.Code)).toBe(true);
    expect(perm.canWrite(UnitType.Releases)).toBe(true);
    expect(perm.isAdmin()).toBe(false);
  });
});
