import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { checkPublicOnly, requireScopes } from '../auth/guards.js';
import { toActivity } from '../convert/activity.js';
import { toUser } from '../convert/user.js';
import { userFeed, userHeatmap } from '../services/activity.js';
import { ghostUser, systemUserById } from '../services/system-users.js';
import { assertUserVisible, getContextUser, searchVisibleUsers } from '../services/users.js';
import { findUsersByIds } from '../store/users.js';
import { pageOf, setListHeaders, setTotalCount } from './pagination.js';
import { repositoryViews } from './repo-views.js';
import type { ApiRouteOptions } from './route-options.js';
import { ActivitySchema } from './schemas/activity.js';
import {
  HeatmapSchema,
  UserSchema,
  UserSearchFailureSchema,
  UserSearchResultSchema,
} from './schemas/user.js';

const UsernameParams = Type.Object({ username: Type.String() });

/** Go's `FormInt64`: 0 unless the value is an integer. */
function formInt64(value: unknown): number {
  return typeof value === 'string' && /^[+-]?\d{1,18}$/.test(value) ? Number(value) : 0;
}

/** Go's `FormBool`: strconv.ParseBool, false otherwise. */
function formBool(value: unknown): boolean {
  return typeof value === 'string' && ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value);
}

/** `/users/search`, `/users/{username}`, its heatmap and activity feed (token category `user`). */
export const usersRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  const { config } = ctx;
  app.addHook('onRequest', requireScopes('user'));

  /** The user in the path, with Gitea's assignment, public-only and visibility checks in that order. */
  const visibleContextUser = async (
    request: { auth: { user: import('../store/schema.js').UserRow | null } },
    name: string,
  ) => {
    const target = await getContextUser(ctx, name, request.auth.user);
    checkPublicOnly(request as Parameters<typeof checkPublicOnly>[0], 'user', target);
    await assertUserVisible(ctx, target, request.auth.user, name);
    return target;
  };

  app.get(
    '/users/search',
    { schema: { response: { 200: UserSearchResultSchema, 500: UserSearchFailureSchema } } },
    async (request, reply) => {
      const query = request.query as Record<string, string | undefined>;
      const viewer = request.auth.user;
      const page = pageOf(request, config);
      const uid = formInt64(query.uid);
      const system = systemUserById(uid);
      let users = system ? [system] : [];
      let total = system ? 1 : 0;
      if (!system) {
        try {
          const found = await searchVisibleUsers(ctx, viewer, {
            keyword: query.q ?? '',
            uid,
            publicOnly: request.auth.publicOnly,
            page,
          });
          users = found.rows;
          total = found.total;
        } catch (error) {
          request.log.error({ err: error }, 'user search failed');
          return reply.code(500).send({ ok: false, error: (error as Error).message });
        }
      }
      setListHeaders(reply, request, config, total, page);
      return { ok: true, data: users.map((user) => toUser(config, user, viewer)) };
    },
  );

  app.get(
    '/users/:username',
    { schema: { params: UsernameParams, response: { 200: UserSchema } } },
    async (request) => {
      const target = await visibleContextUser(request, request.params.username);
      return toUser(config, target, request.auth.user);
    },
  );

  app.get(
    '/users/:username/heatmap',
    { schema: { params: UsernameParams, response: { 200: HeatmapSchema } } },
    async (request) => {
      const target = await visibleContextUser(request, request.params.username);
      return userHeatmap(ctx, target, request.auth.user);
    },
  );

  app.get(
    '/users/:username/activities/feeds',
    { schema: { params: UsernameParams, response: { 200: Type.Array(ActivitySchema) } } },
    async (request, reply) => {
      const viewer = request.auth.user;
      const target = await visibleContextUser(request, request.params.username);
      const query = request.query as Record<string, string | undefined>;
      const page = pageOf(request, config);
      const { rows, total } = await userFeed(ctx, target, viewer, {
        onlyPerformedBy: formBool(query['only-performed-by']),
        date: query.date,
        page,
      });
      const actors = new Map(
        (await findUsersByIds(ctx.db, [...new Set(rows.map((r) => r.act_user_id))])).map((u) => [u.id, u]),
      );
      const repos = await repositoryViews(
        ctx,
        rows.map((r) => r.repo_id),
        viewer,
      );
      setTotalCount(reply, total);
      return rows.map((row) =>
        toActivity(
          config,
          row,
          actors.get(row.act_user_id) ?? systemUserById(row.act_user_id) ?? ghostUser(),
          repos.get(row.repo_id) ?? null,
          viewer,
        ),
      );
    },
  );
};
