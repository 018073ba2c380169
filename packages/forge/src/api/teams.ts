import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireScopes, requireUser } from '../auth/guards.js';
import { toTeam } from '../convert/org.js';
import { changeTeamMembership, getTeamForMember, teamUnits } from '../services/teams.js';
import { userById } from '../services/users.js';
import { TeamSchema } from '../structs/org.js';
import { PathInt64 } from '../structs/query.js';
import { NoContentSchema } from '../structs/responses.js';
import type { ApiRouteOptions } from './route-options.js';

const TeamParams = Type.Object({ id: PathInt64('id of the team') });
const MemberParams = Type.Object({ id: PathInt64('id of the team'), username: Type.String() });

/** `/teams/{id}` and its members (token category `organization`, team members only). */
export const teamsRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  const { config } = ctx;
  app.addHook('onRequest', requireScopes('organization'));

  app.get(
    '/teams/:id',
    { schema: { params: TeamParams, response: { 200: TeamSchema } } },
    async (request) => {
      const doer = requireUser(request);
      const team = await getTeamForMember(ctx, Number(request.params.id), doer);
      const units = await teamUnits(ctx, [team]);
      const org = (await userById(ctx, team.org_id)) ?? null;
      return toTeam(config, team, units.get(team.id) ?? [], org);
    },
  );

  app.put(
    '/teams/:id/members/:username',
    { schema: { params: MemberParams, response: { 204: NoContentSchema } } },
    async (request, reply) => {
      const { id, username } = request.params;
      await changeTeamMembership(ctx, Number(id), requireUser(request), username, 'add');
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/teams/:id/members/:username',
    { schema: { params: MemberParams, response: { 204: NoContentSchema } } },
    async (request, reply) => {
      const { id, username } = request.params;
      await changeTeamMembership(ctx, Number(id), requireUser(request), username, 'remove');
      return reply.code(204).send(null);
    },
  );
};
