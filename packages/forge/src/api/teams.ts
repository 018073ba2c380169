import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { requireScopes, requireUser } from '../auth/guards.js';
import { toTeam } from '../convert/org.js';
import {
  addMember,
  assertTeamOrgOwner,
  getTeamForMember,
  removeMember,
  teamUnits,
} from '../services/teams.js';
import { getUserByName } from '../services/users.js';
import { findUserById } from '../store/users.js';
import type { ApiRouteOptions } from './route-options.js';
import { TeamSchema } from './schemas/org.js';

const TeamParams = Type.Object({ id: Type.String() });
const MemberParams = Type.Object({ id: Type.String(), username: Type.String() });

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
      const org = (await findUserById(ctx.db, team.org_id)) ?? null;
      return toTeam(config, team, units.get(team.id) ?? [], org);
    },
  );

  app.put('/teams/:id/members/:username', { schema: { params: MemberParams } }, async (request, reply) => {
    const doer = requireUser(request);
    const team = await getTeamForMember(ctx, Number(request.params.id), doer);
    await assertTeamOrgOwner(ctx, team, doer);
    const user = await getUserByName(ctx, request.params.username);
    await addMember(ctx, team, user);
    return reply.code(204).send();
  });

  app.delete('/teams/:id/members/:username', { schema: { params: MemberParams } }, async (request, reply) => {
    const doer = requireUser(request);
    const team = await getTeamForMember(ctx, Number(request.params.id), doer);
    await assertTeamOrgOwner(ctx, team, doer);
    const user = await getUserByName(ctx, request.params.username);
    await removeMember(ctx, team, user);
    return reply.code(204).send();
  });
};
