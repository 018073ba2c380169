import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { PathUser } from '../auth/context.js';
import { requireScopes } from '../auth/guards.js';
import { keptAnswers } from '../cache/kept-answers.js';
import { toActivity } from '../convert/activity.js';
import { toRepositoryView } from '../convert/repository.js';
import { toUser } from '../convert/user.js';
import { userFeed, userHeatmapJson } from '../services/activity.js';
import { assertUserVisible, getContextUser, searchUsersForApi } from '../services/users.js';
import type { UserRow } from '../store/schema.js';
import { ActivityFeedQuerySchema, ActivitySchema } from '../structs/activity.js';
import {
  type Heatmap,
  HeatmapSchema,
  type User,
  UserSchema,
  UserSearchFailureSchema,
  UserSearchQuerySchema,
  UserSearchResultSchema,
} from '../structs/user.js';
import { pageOf, setListHeaders } from './pagination.js';
import type { ApiRouteOptions } from './route-options.js';

const UsernameParams = Type.Object({ username: Type.String() });

/** Go's `FormInt64`: 0 unless the value is an integer. */
function formInt64(value: unknown): number {
  return typeof value === 'string' && /^[+-]?\d{1,18}$/.test(value) ? Number(value) : 0;
}

/** Go's `FormBool`: strconv.ParseBool, false otherwise. */
function formBool(value: unknown): boolean {
  return typeof value === 'string' && ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value);
}

/**
 * `/users/search`, `/users/{username}`, its heatmap and activity feed (token category `user`).
 *
 * Long by design: one registration per route of the area, each a schema and a short handler; the rules live in services/.
 */
export const usersRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  const { config } = ctx;
  app.addHook('onRequest', requireScopes('user'));
  // Answers derived from rows only (not the heatmap: its window moves with the clock).
  const kept = keptAnswers();

  /** The user in the path, with Gitea's assignment, public-only and visibility checks (404 when hidden). */
  const visibleContextUser = async (
    request: { auth: { user: UserRow | null; publicOnly: boolean }; pathUser?: PathUser },
    name: string,
  ) => {
    const target = await getContextUser(ctx, name, request.auth.user, request.pathUser);
    await assertUserVisible(ctx, target, request.auth.user, name, request.auth.publicOnly);
    return target;
  };

  app.get(
    '/users/search',
    {
      ...kept,
      schema: {
        querystring: UserSearchQuerySchema,
        response: { 200: UserSearchResultSchema, 500: UserSearchFailureSchema },
      },
    },
    async (request, reply) => {
      const query = request.query as Record<string, string | undefined>;
      const viewer = request.auth.user;
      const page = pageOf(request, config);
      let found: { rows: UserRow[]; total: number };
      try {
        found = await searchUsersForApi(ctx, viewer, {
          keyword: query.q ?? '',
          uid: formInt64(query.uid),
          publicOnly: request.auth.publicOnly,
          page,
        });
      } catch (error) {
        request.log.error({ err: error }, 'user search failed');
        return reply.code(500).send({ ok: false, error: (error as Error).message });
      }
      const { rows: users, total } = found;
      setListHeaders(reply, request, config, total, page);
      return { ok: true, data: users.map((user) => toUser(config, user, viewer)) };
    },
  );

  app.get(
    '/users/:username',
    // The token lookup reads the user in the path too (one statement instead of two).
    {
      ...kept,
      config: { ...kept.config, pathUser: 'username' },
      schema: { params: UsernameParams, response: { 200: UserSchema } },
    },
    async (request) => {
      const target = await visibleContextUser(request, request.params.username);
      return toUser(config, target, request.auth.user);
    },
  );

  app.get(
    '/users/:username/heatmap',
    { schema: { params: UsernameParams, response: { 200: HeatmapSchema } } },
    async (request, reply) => {
      const target = await visibleContextUser(request, request.params.username);
      const body = await userHeatmapJson(ctx, target, request.auth);
      // The service answers HeatmapSchema's JSON text itself (its cache keeps the bytes); Fastify sends a
      // Buffer as it is, so the schema only documents the answer here.
      return reply.type('application/json; charset=utf-8').send(body as unknown as Heatmap);
    },
  );

  app.get(
    '/users/:username/activities/feeds',
    {
      ...kept,
      schema: {
        querystring: ActivityFeedQuerySchema,
        params: UsernameParams,
        response: { 200: Type.Array(ActivitySchema) },
      },
    },
    async (request, reply) => {
      const viewer = request.auth.user;
      const target = await visibleContextUser(request, request.params.username);
      const query = request.query as Record<string, string | undefined>;
      const page = pageOf(request, config);
      const { rows, total, actorOf, repos } = await userFeed(ctx, target, request.auth, {
        onlyPerformedBy: formBool(query['only-performed-by']),
        date: query.date,
        page,
      });
      setListHeaders(reply, request, config, total, page);
      const actors = new Map<number, User>();
      const repoViews = new Map<number, Record<string, unknown> | null>();
      return rows.map((row) => {
        let actor = actors.get(row.act_user_id);
        if (!actor) {
          actor = toUser(config, actorOf(row.act_user_id), viewer);
          actors.set(row.act_user_id, actor);
        }
        let repo = repoViews.get(row.repo_id);
        if (repo === undefined) {
          const view = repos.get(row.repo_id);
          repo = view ? toRepositoryView(config, view, viewer) : null;
          repoViews.set(row.repo_id, repo);
        }
        return toActivity(row, actor, repo);
      });
    },
  );
};
