import contentDisposition from 'content-disposition';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { requireScopes } from '../auth/guards.js';
import { NotFound } from '../errors.js';
import { type AttachmentDownload, openDownloadByTag, openDownloadByUuid } from '../services/attachments.js';
import type { ServiceContext } from '../services/context.js';
import { loadRepoContext } from '../services/repos.js';
import { assertTokenReaches } from '../services/token-repositories.js';

/**
 * Sends an attachment as Gitea's ServeContentByReadSeeker does: the sniffed type (media as is, text as
 * text/plain, everything else opaque), its length, an RFC 6266 disposition with an RFC 5987 `filename*`
 * for non-ASCII names, and the uuid as a strong ETag. The content is streamed from disk.
 */
function serve(request: FastifyRequest, reply: FastifyReply, download: AttachmentDownload) {
  const etag = `"${download.row.uuid}"`;
  reply
    .header('Content-Type', download.contentType)
    .header('X-Content-Type-Options', 'nosniff')
    // Uploaded content never runs as a page of this origin, whatever a browser makes of it.
    .header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox")
    .header('Content-Disposition', contentDisposition(download.row.name, { type: 'inline' }))
    .header('Access-Control-Expose-Headers', 'Content-Disposition')
    .header('Cache-Control', 'private, max-age=0, must-revalidate')
    .header('ETag', etag)
    .header('Last-Modified', new Date(download.row.created_unix * 1000).toUTCString());
  if (request.headers['if-none-match'] === etag) return reply.code(304).send();
  reply.header('Content-Length', String(download.size));
  if (request.method === 'HEAD') return reply.send();
  return reply.send(download.open());
}

/**
 * The download links of release attachments: `/attachments/{uuid}` (the API's browser_download_url)
 * and `/{owner}/{repo}/releases/download/{tag}/{name}`. Tokens need the repository scope; a repository,
 * release or draft the caller may not see is 404, exactly as the API answers.
 */
export const downloadRoutes: FastifyPluginAsync<{ ctx: ServiceContext }> = async (app, { ctx }) => {
  app.addHook('onRequest', requireScopes('repository'));

  app.get('/attachments/:uuid', async (request, reply) => {
    const { uuid } = request.params as { uuid: string };
    const download = await openDownloadByUuid(ctx, uuid, request.auth.user, {
      count: request.method === 'GET',
      publicOnly: request.auth.publicOnly,
      repositories: request.auth.repositories,
    });
    return serve(request, reply, download);
  });

  app.get('/:owner/:repo/releases/download/:tag/:name', async (request, reply) => {
    const { owner, repo, tag, name } = request.params as Record<string, string>;
    if (!owner || !repo || !tag || !name) throw new NotFound();
    const repoContext = await loadRepoContext(ctx, owner, repo, request.auth.user);
    assertTokenReaches(request.auth.repositories, repoContext.repo);
    if (request.auth.publicOnly && repoContext.repo.is_private === 1) throw new NotFound();
    const download = await openDownloadByTag(repoContext, tag, name, { count: request.method === 'GET' });
    return serve(request, reply, download);
  });
};
