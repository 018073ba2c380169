/**
 * Webhook routes (Gitea 1.25 paths and answers) for the four places hooks live, plus the forge's
 * delivery history and redelivery under each hook (`…/hooks/{id}/deliveries…`, shaped like GitHub's).
 * Each place decides who may manage its hooks, then the same handlers run:
 * - `/repos/{owner}/{repo}/hooks`: token category repository, repository admin (or site admin);
 * - `/orgs/{org}/hooks`: category organization, organization owner (or site admin);
 * - `/user/hooks`: category user, the signed-in user's own hooks;
 * - `/admin/hooks`: category admin, site administrators (system hooks).
 */
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { checkPublicOnly, requireScopes, requireSiteAdmin, requireUser } from '../auth/guards.js';
import { toHook } from '../convert/hook.js';
import { toHookDelivery, toHookDeliveryDetail } from '../convert/hook-delivery.js';
import type { ServiceContext } from '../services/context.js';
import { assertOrgOwner, getOrganization } from '../services/orgs.js';
import {
  CreateHookOptionSchema,
  EditHookOptionSchema,
  HookDeliveryDetailSchema,
  HookDeliveryListQuerySchema,
  HookDeliverySchema,
  HookSchema,
  HookTestQuerySchema,
} from '../structs/hook.js';
import { PageQuerySchema, PathInt64 } from '../structs/query.js';
import { NoContentSchema } from '../structs/responses.js';
import {
  createHook,
  editHook,
  getDelivery,
  getHook,
  type HookScope,
  listDeliveries,
  listHooks,
  redeliver,
  removeHook,
} from '../webhooks/hooks.js';
import { testHook } from '../webhooks/push-events.js';
import { pageOf, setListHeaders } from './pagination.js';
import { requireRepoAdmin, useRepoAssignment } from './repo-assignment.js';
import type { ApiRouteOptions } from './route-options.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Whose hooks a hooks route manages, resolved and authorised before the body is validated. */
    hookScope?: HookScope;
  }
}

/** An id from the path; anything but a positive int64 finds nothing. */
function idOf(text: string): number {
  return /^\d{1,15}$/.test(text) ? Number(text) : -1;
}

const HookId = PathInt64('id of the hook');
const DeliveryId = PathInt64('id of the delivery (forge extension)');

/**
 * The hooks and deliveries routes under `base`, for the scope `scopeOf` resolves and authorises.
 *
 * Long by design: one registration per route of the area, each a schema and a short handler; the rules live in services/.
 */
function hookRoutes(
  app: FastifyInstance,
  ctx: ServiceContext,
  base: string,
  params: Record<string, ReturnType<typeof Type.String>>,
  scopeOf: (request: FastifyRequest) => Promise<HookScope>,
): void {
  const { config } = ctx;
  // As Gitea's middleware: the target and the caller's right to manage its hooks come before the body.
  app.addHook('preValidation', async (request) => {
    request.hookScope = await scopeOf(request);
  });
  const scopeOfRequest = async (request: FastifyRequest): Promise<HookScope> => {
    if (!request.hookScope) throw new Error('hook route reached without its scope');
    return request.hookScope;
  };
  const Base = Type.Object(params);
  const One = Type.Object({ ...params, id: HookId });
  const Delivery = Type.Object({ ...params, id: HookId, delivery: DeliveryId });
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();

  typed.get(
    base,
    { schema: { params: Base, querystring: PageQuerySchema, response: { 200: Type.Array(HookSchema) } } },
    async (request, reply) => {
      const scope = await scopeOfRequest(request);
      const page = pageOf(request, config);
      const { rows, total } = await listHooks(ctx, scope, page);
      setListHeaders(reply, request, config, total, page);
      return rows.map(toHook);
    },
  );

  typed.post(
    base,
    { schema: { params: Base, body: CreateHookOptionSchema, response: { 201: HookSchema } } },
    async (request, reply) => {
      const scope = await scopeOfRequest(request);
      const hook = await createHook(ctx, scope, requireUser(request), request.body);
      return reply.code(201).send(toHook(hook));
    },
  );

  typed.get(`${base}/:id`, { schema: { params: One, response: { 200: HookSchema } } }, async (request) => {
    const scope = await scopeOfRequest(request);
    return toHook(await getHook(ctx, scope, idOf(request.params.id)));
  });

  typed.patch(
    `${base}/:id`,
    { schema: { params: One, body: EditHookOptionSchema, response: { 200: HookSchema } } },
    async (request) => {
      const scope = await scopeOfRequest(request);
      return toHook(await editHook(ctx, scope, idOf(request.params.id), request.body));
    },
  );

  typed.delete(
    `${base}/:id`,
    { schema: { params: One, response: { 204: NoContentSchema } } },
    async (request, reply) => {
      const scope = await scopeOfRequest(request);
      await removeHook(ctx, scope, idOf(request.params.id));
      return reply.code(204).send(null);
    },
  );

  typed.get(
    `${base}/:id/deliveries`,
    {
      schema: {
        description: 'Forge extension: the deliveries of a hook, newest first',
        params: One,
        querystring: HookDeliveryListQuerySchema,
        response: { 200: Type.Array(HookDeliverySchema) },
      },
    },
    async (request, reply) => {
      const scope = await scopeOfRequest(request);
      const page = pageOf(request, config);
      const { rows, total } = await listDeliveries(ctx, scope, idOf(request.params.id), page);
      setListHeaders(reply, request, config, total, page);
      return rows.map(toHookDelivery);
    },
  );

  typed.get(
    `${base}/:id/deliveries/:delivery`,
    {
      schema: {
        description: 'Forge extension: one delivery with its request (no secrets) and answer excerpt',
        params: Delivery,
        response: { 200: HookDeliveryDetailSchema },
      },
    },
    async (request) => {
      const scope = await scopeOfRequest(request);
      const { hook, task } = await getDelivery(
        ctx,
        scope,
        idOf(request.params.id),
        idOf(request.params.delivery),
      );
      return toHookDeliveryDetail(hook, task);
    },
  );

  typed.post(
    `${base}/:id/deliveries/:delivery/attempts`,
    {
      schema: {
        description:
          'Forge extension: send a finished delivery again now, as a new delivery with its own id (the original stays in the history)',
        params: Delivery,
        response: { 202: HookDeliverySchema },
      },
    },
    async (request, reply) => {
      const scope = await scopeOfRequest(request);
      const task = await redeliver(ctx, scope, idOf(request.params.id), idOf(request.params.delivery));
      return reply.code(202).send(toHookDelivery(task));
    },
  );
}

/** `/repos/{owner}/{repo}/hooks…` and the test delivery. */
export const repoHookRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  useRepoAssignment(app, ctx);
  const scopeOf = async (request: FastifyRequest) => {
    requireUser(request);
    return { repoId: requireRepoAdmin(request).repo.id };
  };
  const params = { owner: Type.String(), repo: Type.String() };
  hookRoutes(app, ctx, '/repos/:owner/:repo/hooks', params, scopeOf);

  app.post(
    '/repos/:owner/:repo/hooks/:id/tests',
    {
      schema: {
        params: Type.Object({ ...params, id: HookId }),
        querystring: HookTestQuerySchema,
        response: { 204: NoContentSchema },
      },
    },
    async (request, reply) => {
      const repo = requireRepoAdmin(request);
      const hook = await getHook(ctx, { repoId: repo.repo.id }, idOf(request.params.id));
      await testHook(repo, hook, request.query.ref ?? '');
      return reply.code(204).send(null);
    },
  );
};

/** `/orgs/{org}/hooks…`. */
export const orgHookRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  app.addHook('onRequest', requireScopes('organization'));
  hookRoutes(app, ctx, '/orgs/:org/hooks', { org: Type.String() }, async (request) => {
    const org = await getOrganization(ctx, (request.params as { org: string }).org);
    checkPublicOnly(request, 'organization', org);
    await assertOrgOwner(ctx, org, requireUser(request));
    return { ownerId: org.id };
  });
};

/** `/user/hooks…`: the caller's own hooks. */
export const userHookRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  app.addHook('onRequest', requireScopes('user'));
  hookRoutes(app, ctx, '/user/hooks', {}, async (request) => ({ ownerId: requireUser(request).id }));
};

/** `/admin/hooks…`: system hooks, for site administrators. */
export const adminHookRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  app.addHook('onRequest', requireScopes('admin'));
  hookRoutes(app, ctx, '/admin/hooks', {}, async (request) => {
    requireSiteAdmin(request);
    return { system: true };
  });
};
