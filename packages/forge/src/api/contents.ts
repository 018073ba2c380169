import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import contentDisposition from 'content-disposition';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { entryType, toContentsResponse } from '../convert/contents.js';
import { OCTET_STREAM, servedContentType } from '../services/content-types.js';
import { type ContentsEntry, getContents, getRawFile, type RawFile } from '../services/contents.js';
import type { RefCommit } from '../services/refs.js';
import type { RepoContext } from '../services/repo-context.js';
import { UnitType } from '../store/units.js';
import { ContentsResponseSchema, RefQuerySchema } from '../structs/contents.js';
import { formTrim } from './form.js';
import { requireRepoReader, useRepoAssignment } from './repo-assignment.js';
import type { ApiRouteOptions } from './route-options.js';

const RepoParams = Type.Object({ owner: Type.String(), repo: Type.String() });
const PathParams = (title: string) =>
  Type.Object({ owner: Type.String(), repo: Type.String(), '*': Type.String({ title }) });
const ContentsAnswer = Type.Union([ContentsResponseSchema, Type.Array(ContentsResponseSchema)]);

function render(repo: RepoContext, ref: RefCommit, item: ContentsEntry, config: RepoContext['config']) {
  return toContentsResponse(config, repo.owner, repo.repo, ref, item.path, item.entry, item.extras);
}

/**
 * Sends a file as Gitea's ServeBlob does: the sniffed type (text as text/plain, media as detected,
 * everything else opaque and as an attachment), the blob id as a strong ETag, the last change as
 * Last-Modified, and a sandboxing CSP so repository content never runs as a page of this origin.
 */
async function sendRaw(request: FastifyRequest, reply: FastifyReply, file: RawFile) {
  const type = await servedContentType(file.head);
  const inline = type !== OCTET_STREAM;
  const etag = `"${file.entry.sha}"`;
  reply
    .header('X-Gitea-Object-Type', entryType(file.entry))
    .header('Content-Type', type)
    .header('X-Content-Type-Options', 'nosniff')
    .header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox")
    .header('Content-Disposition', contentDisposition(file.name, { type: inline ? 'inline' : 'attachment' }))
    .header('Access-Control-Expose-Headers', 'Content-Disposition')
    .header('Cache-Control', 'private, max-age=300')
    .header('ETag', etag);
  if (file.lastModified) reply.header('Last-Modified', file.lastModified.toUTCString());
  if (request.headers['if-none-match'] === etag) {
    if (!Buffer.isBuffer(file.body)) (file.body as NodeJS.ReadableStream & { destroy(): void }).destroy();
    return reply.code(304).send();
  }
  reply.header('Content-Length', String(file.entry.size));
  return reply.send(file.body);
}

/** Reading files: contents (metadata and base64), raw bytes and media (Gitea's repo/file.go reads). */
export const contentsReadRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  useRepoAssignment(app, ctx);
  const contents = async (request: FastifyRequest, path: string) => {
    const repo = requireRepoReader(request, UnitType.Code);
    const result = await getContents(repo, path, formTrim((request.query as { ref?: string }).ref));
    if ('list' in result) return result.list.map((item) => render(repo, result.ref, item, ctx.config));
    return render(repo, result.ref, result.entry, ctx.config);
  };

  app.get(
    '/repos/:owner/:repo/contents',
    { schema: { params: RepoParams, querystring: RefQuerySchema, response: { 200: ContentsAnswer } } },
    async (request) => contents(request, ''),
  );

  app.get(
    '/repos/:owner/:repo/contents/*',
    {
      schema: {
        params: PathParams('filepath'),
        querystring: RefQuerySchema,
        response: { 200: ContentsAnswer },
      },
    },
    async (request) => contents(request, request.params['*']),
  );

  for (const area of ['raw', 'media'] as const) {
    app.get(
      `/repos/:owner/:repo/${area}/*`,
      { schema: { params: PathParams('filepath'), querystring: RefQuerySchema } },
      async (request, reply) => {
        const repo = requireRepoReader(request, UnitType.Code);
        const file = await getRawFile(repo, request.params['*'], formTrim(request.query.ref));
        return sendRaw(request, reply, file);
      },
    );
  }
};
