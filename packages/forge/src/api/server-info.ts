import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { GITEA_COMPAT_VERSION } from '../version.js';
import type { ApiRouteOptions } from './route-options.js';

/** `GET /version` and `GET /settings/api`. */
export const serverInfoRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  app.get(
    '/version',
    { schema: { response: { 200: Type.Object({ version: Type.String() }) } } },
    async () => ({ version: GITEA_COMPAT_VERSION }),
  );
  app.get(
    '/settings/api',
    {
      schema: {
        response: {
          200: Type.Object({
            max_response_items: Type.Integer(),
            default_paging_num: Type.Integer(),
            default_git_trees_per_page: Type.Integer(),
            default_max_blob_size: Type.Integer(),
          }),
        },
      },
    },
    async () => ({
      max_response_items: ctx.config.api.maxResponseItems,
      default_paging_num: ctx.config.api.defaultPagingNum,
      default_git_trees_per_page: 1000,
      default_max_blob_size: 10485760,
    }),
  );
};
