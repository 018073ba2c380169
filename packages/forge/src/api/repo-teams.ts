import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireUser } from '../auth/guards.js';
import { toTeam } from '../convert/org.js';
import type { RepoContext } from '../services/repo-context.js';
import { addTeamToRepo, getTeamOfRepo, listTeamsOfRepo, removeTeamFromRepo } from '../services/repo-teams.js';
import { teamUnits } from '../services/teams.js';
import type { TeamRow } from '../store/schema.js';
import { TeamSchema } from '../structs/org.js';
import { NoContentSchema } from '../structs/responses.js';
import { requireAnyRepoReader, requireRepoAdmin, useRepoAssignment } from './repo-assignment.js';
import type { ApiRouteOptions } from './route-options.js';

const RepoParams = Type.Object({ owner: Type.String(), repo: Type.String() });
const TeamParams = Type.Object({ owner: Type.String(), repo: Type.String(), team: Type.String() });

/** Teams with their units, as Gitea's `convert.ToTeams(…, false)`: `organization` is null here. */
async function renderTeams(repo: RepoContext, teams: TeamRow[]) {
  const units = await teamUnits(repo, teams);
  return teams.map((team) => toTeam(repo.config, team, units.get(team.id) ?? [], null));
}

/**
 * `/repos/{owner}/{repo}/teams…` (seed Repository teams section, reference §7): token category
 * `repository`, repository assignment (404 when missing or invisible), then sign-in for every method.
 * Reading needs any access to the repository, changing needs repository admin; the service applies the
 * seed's rules (405 for user-owned repositories, the organization's team-access setting, 404/422).
 */
export const repoTeamRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  useRepoAssignment(app, ctx);
  app.addHook('preHandler', async (request) => {
    requireUser(request);
  });

  app.get(
    '/repos/:owner/:repo/teams',
    { schema: { params: RepoParams, response: { 200: Type.Array(TeamSchema) } } },
    async (request) => {
      const repo = requireAnyRepoReader(request);
      return renderTeams(repo, await listTeamsOfRepo(repo));
    },
  );

  app.get(
    '/repos/:owner/:repo/teams/:team',
    { schema: { params: TeamParams, response: { 200: TeamSchema } } },
    async (request) => {
      const repo = requireAnyRepoReader(request);
      const [team] = await renderTeams(repo, [await getTeamOfRepo(repo, request.params.team)]);
      return team!;
    },
  );

  app.put(
    '/repos/:owner/:repo/teams/:team',
    { schema: { params: TeamParams, response: { 204: NoContentSchema } } },
    async (request, reply) => {
      await addTeamToRepo(requireRepoAdmin(request), request.params.team);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/repos/:owner/:repo/teams/:team',
    { schema: { params: TeamParams, response: { 204: NoContentSchema } } },
    async (request, reply) => {
      await removeTeamFromRepo(requireRepoAdmin(request), request.params.team);
      return reply.code(204).send(null);
    },
  );
};
