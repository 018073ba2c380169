import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { checkPublicOnly, requireScopes, requireUser } from '../auth/guards.js';
import { toOrganization, toTeam } from '../convert/org.js';
import {
  assertOrgMember,
  assertOrgOwner,
  createOrganization,
  deleteOrganization,
  editOrganization,
  getOrganization,
  isOrgVisibleTo,
  orgNotFound,
} from '../services/orgs.js';
import { createTeam, listOrgTeams, teamUnits } from '../services/teams.js';
import { searchVisibleUsers } from '../services/users.js';
import { UserType, Visibility } from '../store/schema.js';
import {
  CreateOrgOptionSchema,
  CreateTeamOptionSchema,
  EditOrgOptionSchema,
  OrganizationSchema,
  TeamSchema,
} from '../structs/org.js';
import { PageQuerySchema } from '../structs/query.js';
import { NoContentSchema } from '../structs/responses.js';
import { pageOf, setListHeaders } from './pagination.js';
import type { ApiRouteOptions } from './route-options.js';

const OrgParams = Type.Object({ org: Type.String() });

/**
 * `/orgs`, `/orgs/{org}` and `/orgs/{org}/teams` (token category `organization`).
 *
 * Long by design: one registration per route of the area, each a schema and a short handler; the rules live in services/.
 */
export const orgsRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  const { config } = ctx;
  app.addHook('onRequest', requireScopes('organization'));

  /** `orgAssignment` + `checkTokenPublicOnly`: the organization in the path, or 404/403. */
  const contextOrg = async (request: Parameters<typeof checkPublicOnly>[0], name: string) => {
    const org = await getOrganization(ctx, name);
    checkPublicOnly(request, 'organization', org);
    return org;
  };

  app.get(
    '/orgs',
    { schema: { querystring: PageQuerySchema, response: { 200: Type.Array(OrganizationSchema) } } },
    async (request, reply) => {
      const viewer = request.auth.user;
      const page = pageOf(request, config);
      const visible: number[] = [Visibility.Public];
      if (viewer && !request.auth.publicOnly) {
        visible.push(Visibility.Limited);
        if (viewer.is_admin) visible.push(Visibility.Private);
      }
      const { rows, total } = await searchVisibleUsers(ctx, viewer, {
        keyword: '',
        uid: 0,
        publicOnly: false,
        page,
        type: UserType.Organization,
        visible,
      });
      setListHeaders(reply, request, config, total, page);
      return rows.map((org) => toOrganization(config, org));
    },
  );

  app.post(
    '/orgs',
    { schema: { body: CreateOrgOptionSchema, response: { 201: OrganizationSchema } } },
    async (request, reply) => {
      const doer = requireUser(request);
      const org = await createOrganization(ctx, doer, request.body);
      return reply.code(201).send(toOrganization(config, org));
    },
  );

  app.get(
    '/orgs/:org',
    { schema: { params: OrgParams, response: { 200: OrganizationSchema } } },
    async (request) => {
      const org = await contextOrg(request, request.params.org);
      if (!(await isOrgVisibleTo(ctx, org, request.auth.user))) throw orgNotFound(request.params.org);
      return toOrganization(config, org, { hideEmail: request.auth.user === null });
    },
  );

  app.patch(
    '/orgs/:org',
    { schema: { params: OrgParams, body: EditOrgOptionSchema, response: { 200: OrganizationSchema } } },
    async (request) => {
      const org = await contextOrg(request, request.params.org);
      const doer = requireUser(request);
      await assertOrgOwner(ctx, org, doer);
      return toOrganization(config, await editOrganization(ctx, org, request.body));
    },
  );

  app.delete(
    '/orgs/:org',
    { schema: { params: OrgParams, response: { 204: NoContentSchema } } },
    async (request, reply) => {
      const org = await contextOrg(request, request.params.org);
      await deleteOrganization(ctx, org, requireUser(request));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/orgs/:org/teams',
    {
      schema: { querystring: PageQuerySchema, params: OrgParams, response: { 200: Type.Array(TeamSchema) } },
    },
    async (request, reply) => {
      const org = await contextOrg(request, request.params.org);
      const doer = requireUser(request);
      await assertOrgMember(ctx, org, doer);
      const page = pageOf(request, config);
      const { rows, total } = await listOrgTeams(ctx, org, page);
      const units = await teamUnits(ctx, rows);
      setListHeaders(reply, request, config, total, page);
      return rows.map((team) => toTeam(config, team, units.get(team.id) ?? [], null));
    },
  );

  app.post(
    '/orgs/:org/teams',
    { schema: { params: OrgParams, body: CreateTeamOptionSchema, response: { 201: TeamSchema } } },
    async (request, reply) => {
      const org = await contextOrg(request, request.params.org);
      const doer = requireUser(request);
      await assertOrgMember(ctx, org, doer);
      await assertOrgOwner(ctx, org, doer);
      const team = await createTeam(ctx, org, request.body);
      const units = await teamUnits(ctx, [team]);
      return reply.code(201).send(toTeam(config, team, units.get(team.id) ?? [], org));
    },
  );
};
