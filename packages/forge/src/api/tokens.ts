import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireBasicAuth, requireScopes, requireSelfOrAdmin, requireUser } from '../auth/guards.js';
import { TokenScope } from '../auth/scopes.js';
import { rfc3339 } from '../convert/time.js';
import {
  createAccessToken,
  deleteAccessToken,
  listAccessTokens,
  repositoriesOfTokens,
} from '../services/tokens.js';
import { getContextUser } from '../services/users.js';
import type { AccessTokenRow } from '../store/schema.js';
import { PageQuerySchema } from '../structs/query.js';
import { NoContentSchema } from '../structs/responses.js';
import { AccessTokenSchema, CreateAccessTokenOptionSchema } from '../structs/token.js';
import { pageOf, setTotalCount } from './pagination.js';
import type { ApiRouteOptions } from './route-options.js';

const UsernameParams = Type.Object({ username: Type.String() });

type TokenRepositories = Map<number, Array<{ id: number; name: string; owner: string }>>;

function toAccessToken(row: AccessTokenRow, repositories: TokenRepositories, plain = '') {
  const listed = repositories.get(row.id);
  return {
    id: row.id,
    name: row.name,
    sha1: plain,
    token_last_eight: row.token_last_eight,
    scopes: TokenScope.parse(row.scope).toList(),
    ...(listed
      ? {
          repositories: listed.map((repo) => ({
            id: repo.id,
            name: repo.name,
            owner: repo.owner,
            full_name: `${repo.owner}/${repo.name}`,
          })),
        }
      : {}),
  };
}

/** `/users/{username}/tokens`: personal access tokens, managed only over HTTP Basic auth. */
export const tokensRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  app.addHook('onRequest', requireScopes('user'));

  /** Gitea's chain: user assignment (404), reqSelfOrAdmin (403), reqBasicOrRevProxyAuth (401). */
  const owner = async (request: Parameters<typeof requireBasicAuth>[0], name: string) => {
    const user = await getContextUser(ctx, name, request.auth.user);
    requireSelfOrAdmin(request, user);
    requireBasicAuth(request);
    return user;
  };

  app.get(
    '/users/:username/tokens',
    {
      schema: {
        querystring: PageQuerySchema,
        params: UsernameParams,
        response: { 200: Type.Array(AccessTokenSchema) },
      },
    },
    async (request, reply) => {
      const user = await owner(request, request.params.username);
      const page = pageOf(request, ctx.config);
      const { rows, total } = await listAccessTokens(ctx, user, page);
      setTotalCount(reply, total);
      const repositories = await repositoriesOfTokens(ctx, rows);
      return rows.map((row) => ({
        ...toAccessToken(row, repositories),
        created_at: rfc3339(row.created_unix),
        last_used_at: rfc3339(row.updated_unix),
      }));
    },
  );

  app.post(
    '/users/:username/tokens',
    {
      schema: {
        params: UsernameParams,
        body: CreateAccessTokenOptionSchema,
        response: { 201: AccessTokenSchema },
      },
    },
    async (request, reply) => {
      const user = await owner(request, request.params.username);
      requireUser(request);
      const { row, token } = await createAccessToken(ctx, user, request.body);
      return reply.code(201).send(toAccessToken(row, await repositoriesOfTokens(ctx, [row]), token));
    },
  );

  app.delete(
    '/users/:username/tokens/:token',
    {
      schema: {
        params: Type.Object({ username: Type.String(), token: Type.String() }),
        response: { 204: NoContentSchema },
      },
    },
    async (request, reply) => {
      const user = await owner(request, request.params.username);
      requireUser(request);
      await deleteAccessToken(ctx, user, request.params.token);
      return reply.code(204).send(null);
    },
  );
};
