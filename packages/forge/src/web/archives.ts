import contentDisposition from 'content-disposition';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { requireScopes } from '../auth/guards.js';
import { NotFound } from '../errors.js';
import { prepareArchive, type RepoArchive } from '../services/archives.js';
import type { ServiceContext } from '../services/context.js';
import { loadRepoContext } from '../services/repos.js';
import { assertTokenReaches } from '../services/token-repositories.js';
import { UnitType } from '../store/units.js';

/**
 * Streams an archive as a download. The length is unknown until git is done, so the body is chunked;
 * the commit id is a strong ETag (an archive of one commit never changes).
 */
export function sendArchive(request: FastifyRequest, reply: FastifyReply, archive: RepoArchive) {
  const etag = `"${archive.commitSha}"`;
  reply
    .header('Content-Type', 'application/octet-stream')
    .header('Content-Disposition', contentDisposition(archive.fileName))
    .header('Access-Control-Expose-Headers', 'Content-Disposition')
    .header('X-Content-Type-Options', 'nosniff')
    .header('Cache-Control', 'private, max-age=0, must-revalidate')
    .header('ETag', etag);
  if (request.headers['if-none-match'] === etag) return reply.code(304).send();
  if (request.method === 'HEAD') return reply.send();
  return reply.send(archive.open());
}

/**
 * `/{owner}/{repo}/archive/{ref}.tar.gz|.zip` (the tarball_url/zipball_url of releases and tags): the
 * repository's access rules, with 404 for anything the caller may not read, as the API answers.
 */
export const archiveRoutes: FastifyPluginAsync<{ ctx: ServiceContext }> = async (app, { ctx }) => {
  app.addHook('onRequest', requireScopes('repository'));

  app.get('/:owner/:repo/archive/*', async (request, reply) => {
    const { owner, repo, '*': archiveName } = request.params as Record<string, string>;
    if (!owner || !repo || !archiveName) throw new NotFound();
    const repoContext = await loadRepoContext(ctx, owner, repo, request.auth.user);
    assertTokenReaches(request.auth.repositories, repoContext.repo);
    if (request.auth.publicOnly && repoContext.repo.is_private === 1) throw new NotFound();
    if (!repoContext.permission.canRead(UnitType.Code) && request.auth.user?.is_admin !== 1) {
      throw new NotFound();
    }
    return sendArchive(request, reply, await prepareArchive(repoContext, archiveName));
  });
};
