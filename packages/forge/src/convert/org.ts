import type { ForgeConfig } from '../config.js';
import { AccessMode, type TeamRow, type UserRow } from '../store/schema.js';
import { accessModeName, UNITS, unitKeyForType } from '../store/units.js';
import { visibilityName } from '../store/visibility.js';
import type { Organization, Team } from '../structs/org.js';
import { avatarUrl } from './user.js';

/** Gitea's `convert.ToOrganization`; `GET /orgs/{org}` blanks the e-mail for anonymous callers. */
export function toOrganization(
  config: ForgeConfig,
  org: UserRow,
  options: { hideEmail?: boolean } = {},
): Organization {
  return {
    id: org.id,
    name: org.name,
    full_name: org.full_name,
    email: options.hideEmail ? '' : org.email,
    avatar_url: avatarUrl(config, org),
    description: org.description,
    website: org.website,
    location: org.location,
    visibility: visibilityName(org.visibility),
    repo_admin_change_team_access: org.repo_admin_change_team_access === 1,
    username: org.name,
  };
}

/** Gitea's `convert.ToTeam`: admin and owner teams list every unit; `organization` only when given. */
export function toTeam(
  config: ForgeConfig,
  team: TeamRow,
  units: Array<{ type: number; access_mode: number }>,
  org: UserRow | null,
): Team {
  const all = team.authorize >= AccessMode.Admin;
  const entries = all
    ? UNITS.map((u) => [u.key, accessModeName(team.authorize)] as const)
    : units.map((u) => [unitKeyForType(u.type), accessModeName(u.access_mode)] as const);
  return {
    id: team.id,
    name: team.name,
    description: team.description,
    organization: org ? toOrganization(config, org) : null,
    includes_all_repositories: team.includes_all_repositories === 1,
    permission: accessModeName(team.authorize),
    units: entries.map(([key]) => key),
    units_map: Object.fromEntries(entries),
    can_create_org_repo: team.can_create_org_repo === 1,
  };
}
