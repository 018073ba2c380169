import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { prepareArchive } from '../services/archives.js';
import { UnitType } from '../store/units.js';
import { sendArchive } from '../web/archives.js';
import { requireRepoReader, useRepoAssignment } from './repo-assignment.js';
import type { ApiRouteOptions } from './route-options.js';

/** `GET /repos/{owner}/{repo}/archive/{archive}` (Gitea's repoGetArchive): code readers only. */
export const archiveApiRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  useRepoAssignment(app, ctx);

  app.get(
    '/repos/:owner/:repo/archive/*',
    {
      schema: {
        operationId: 'repoGetArchive',
        summary: 'Get an archive of a repository',
        tags: ['repository'],
        params: Type.Object({
          owner: Type.String({ description: 'owner of the repo' }),
          repo: Type.String({ description: 'name of the repo' }),
          '*': Type.String({
            title: 'archive',
            description: 'the git reference for download with attached archive format (e.g. master.zip)',
          }),
        }),
      },
    },
    async (request, reply) => {
      const repo = requireRepoReader(request, UnitType.Code);
      return sendArchive(request, reply, await prepareArchive(repo, request.params['*']));
    },
  );
};
