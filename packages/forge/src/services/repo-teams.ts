import { Forbidden, Invalid, MethodNotAllowed, NotFound } from '../errors.js';
import { findTeamByName } from '../store/orgs.js';
import { type TeamRow, UserType } from '../store/schema.js';
import { deleteTeamRepo, insertTeamRepo, listRepoTeams, teamHasRepo } from '../store/team-repos.js';
import type { RepoContext } from './repo-context.js';

/** Gitea's `ErrTeamNotExist` text. */
const teamNotExist = (orgId: number, name: string) =>
  new NotFound(`team does not exist [org_id ${orgId}, team_id 0, name: ${name}]`);

/** Rule 1: every repository-teams operation needs an organization-owned repository (405 otherwise). */
function requireOrgRepo(ctx: RepoContext): void {
  if (ctx.owner.type !== UserType.Organization)
    throw new MethodNotAllowed('repo is not owned by an organization');
}

async function teamOfOwner(ctx: RepoContext, name: string): Promise<TeamRow> {
  const team = await findTeamByName(ctx.db, ctx.owner.id, name);
  if (!team) throw teamNotExist(ctx.owner.id, name);
  return team;
}

/** `GET /repos/{o}/{r}/teams`: the teams that have the repository, Owners first. */
export async function listTeamsOfRepo(ctx: RepoContext): Promise<TeamRow[]> {
  requireOrgRepo(ctx);
  return listRepoTeams(ctx.db, ctx.owner.id, ctx.repo.id);
}

/** `GET /repos/{o}/{r}/teams/{team}`: the team (case-insensitive name) if it has the repository, else 404. */
export async function getTeamOfRepo(ctx: RepoContext, name: string): Promise<TeamRow> {
  requireOrgRepo(ctx);
  const team = await teamOfOwner(ctx, name);
  if (!(await teamHasRepo(ctx.db, team, ctx.repo.id))) throw new NotFound();
  return team;
}

/**
 * Rule 3: changing team access needs the organization setting `repo_admin_change_team_access` (then any
 * repository admin may, the route already demanded admin) or ownership of the repository (org owners,
 * site admins). Checked before the team is looked up, as Gitea does.
 */
function requireTeamAccessChange(ctx: RepoContext): void {
  if (ctx.owner.repo_admin_change_team_access === 1 || ctx.permission.isOwner()) return;
  throw new Forbidden('user is nor repo admin nor owner');
}

/** `PUT /repos/{o}/{r}/teams/{team}`: assigns the team; 422 when it already has the repository. */
export async function addTeamToRepo(ctx: RepoContext, name: string): Promise<void> {
  requireOrgRepo(ctx);
  requireTeamAccessChange(ctx);
  const team = await teamOfOwner(ctx, name);
  const alreadyAdded = new Invalid(`team '${team.name}' is already added to repo`);
  if (team.includes_all_repositories === 1) throw alreadyAdded;
  // The unique (team_id, repo_id) key makes concurrent PUTs answer one 204 and 422 for the rest.
  if (!(await insertTeamRepo(ctx.db, team, ctx.repo.id))) throw alreadyAdded;
}

/**
 * `DELETE /repos/{o}/{r}/teams/{team}`: removes the assignment; 422 when the team does not have the
 * repository, and 422 for a team that includes all repositories (it keeps them until that setting
 * changes, so removing one link would change nothing).
 */
export async function removeTeamFromRepo(ctx: RepoContext, name: string): Promise<void> {
  requireOrgRepo(ctx);
  requireTeamAccessChange(ctx);
  const team = await teamOfOwner(ctx, name);
  if (team.includes_all_repositories === 1) {
    throw new Invalid(`team '${team.name}' includes all repositories and cannot be removed from one`);
  }
  if (!(await deleteTeamRepo(ctx.db, team, ctx.repo.id))) {
    throw new Invalid(`team '${team.name}' was not added to repo`);
  }
}
