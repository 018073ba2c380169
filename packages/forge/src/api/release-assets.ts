import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { requireUser } from '../auth/guards.js';
import { toAttachment } from '../convert/attachment.js';
import { BadRequest } from '../errors.js';
import {
  deleteReleaseAttachment,
  editReleaseAttachment,
  getReleaseAttachment,
  listReleaseAttachments,
  releaseForUpload,
  uploadReleaseAttachment,
} from '../services/attachments.js';
import type { RepoContext } from '../services/repo-context.js';
import type { AttachmentRow, ReleaseRow } from '../store/schema.js';
import { UnitType } from '../store/units.js';
import { PathInt64 } from '../structs/query.js';
import { AttachmentSchema, EditAttachmentOptionsSchema } from '../structs/release.js';
import { NoContentSchema } from '../structs/responses.js';
import { requireRepoReader, requireRepoWriter, useRepoAssignment } from './repo-assignment.js';
import type { ApiRouteOptions } from './route-options.js';

const ReleaseParams = Type.Object({
  owner: Type.String({ description: 'owner of the repo' }),
  repo: Type.String({ description: 'name of the repo' }),
  id: PathInt64('id of the release'),
});
const AssetParams = Type.Object({
  ...ReleaseParams.properties,
  attachment_id: PathInt64('id of the attachment'),
});
const UploadQuery = Type.Object({
  name: Type.Optional(Type.String({ description: 'name of the attachment' })),
});

/** An int64 id from the path; anything else finds nothing (Gitea's PathParamInt64 gives 0). */
function pathId(text: string): number {
  return /^\d{1,15}$/.test(text) ? Number(text) : -1;
}

/**
 * The upload of POST …/assets: the multipart part named `attachment` (its file name unless `?name=`
 * is given), or the raw body of any other content type with the name from `?name=`. The body is only
 * read here, after the permission and release checks, and streamed to disk.
 */
async function receive(
  request: FastifyRequest,
  repo: RepoContext,
  release: ReleaseRow,
  queryName: string,
): Promise<AttachmentRow> {
  if (!request.isMultipart()) {
    return uploadReleaseAttachment(repo, release, { name: queryName, content: request.raw });
  }
  let created: AttachmentRow | null = null;
  // One part more than the limit lets the service see (and refuse) an oversized file itself.
  const parts = request.parts({ limits: { fileSize: repo.config.attachment.maxSizeBytes + 1, parts: 100 } });
  for await (const part of parts) {
    if (part.type !== 'file') continue;
    if (part.fieldname !== 'attachment' || created) {
      part.file.resume();
      continue;
    }
    created = await uploadReleaseAttachment(repo, release, {
      name: queryName || part.filename || '',
      content: part.file,
    });
  }
  if (!created) throw new BadRequest('http: no such file');
  return created;
}

/**
 * `/repos/{owner}/{repo}/releases/{id}/assets…` (Gitea's release_attachment.go): reads need the releases
 * unit, changes a signed-in writer of it; every route first reads the release under the release read
 * rule, so a hidden draft's assets are 404 like the draft.
 *
 * Long by design: one registration per route of the area, each a schema and a short handler; the rules live in services/.
 */
export const releaseAssetRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  useRepoAssignment(app, ctx);
  await app.register(multipart, { throwFileSizeLimit: true });
  // Gitea takes any non-multipart body as the raw file: never parse or buffer it.
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));

  const render = (row: AttachmentRow) => toAttachment(ctx.config, row);

  app.get(
    '/repos/:owner/:repo/releases/:id/assets',
    {
      schema: {
        operationId: 'repoListReleaseAttachments',
        summary: "List release's attachments",
        tags: ['repository'],
        params: ReleaseParams,
        response: { 200: Type.Array(AttachmentSchema) },
      },
    },
    async (request) => {
      const repo = requireRepoReader(request, UnitType.Releases);
      return (await listReleaseAttachments(repo, pathId(request.params.id))).map(render);
    },
  );

  app.post(
    '/repos/:owner/:repo/releases/:id/assets',
    {
      schema: {
        operationId: 'repoCreateReleaseAttachment',
        summary: 'Create a release attachment',
        tags: ['repository'],
        consumes: ['multipart/form-data', 'application/octet-stream'],
        params: ReleaseParams,
        querystring: UploadQuery,
        response: { 201: AttachmentSchema },
      },
    },
    async (request, reply) => {
      requireUser(request);
      const repo = requireRepoWriter(request, UnitType.Releases);
      const release = await releaseForUpload(repo, pathId(request.params.id));
      const created = await receive(request, repo, release, request.query.name ?? '');
      return reply.code(201).send(render(created));
    },
  );

  app.get(
    '/repos/:owner/:repo/releases/:id/assets/:attachment_id',
    {
      schema: {
        operationId: 'repoGetReleaseAttachment',
        summary: 'Get a release attachment',
        tags: ['repository'],
        params: AssetParams,
        response: { 200: AttachmentSchema },
      },
    },
    async (request) => {
      const repo = requireRepoReader(request, UnitType.Releases);
      const { id, attachment_id } = request.params;
      return render(await getReleaseAttachment(repo, pathId(id), pathId(attachment_id)));
    },
  );

  app.patch(
    '/repos/:owner/:repo/releases/:id/assets/:attachment_id',
    {
      schema: {
        operationId: 'repoEditReleaseAttachment',
        summary: 'Edit a release attachment',
        tags: ['repository'],
        params: AssetParams,
        body: EditAttachmentOptionsSchema,
        // Gitea answers an edit with 201.
        response: { 201: AttachmentSchema },
      },
    },
    async (request, reply) => {
      requireUser(request);
      const repo = requireRepoWriter(request, UnitType.Releases);
      const { id, attachment_id } = request.params;
      const row = await editReleaseAttachment(repo, pathId(id), pathId(attachment_id), request.body ?? {});
      return reply.code(201).send(render(row));
    },
  );

  app.delete(
    '/repos/:owner/:repo/releases/:id/assets/:attachment_id',
    {
      schema: {
        response: { 204: NoContentSchema },
        operationId: 'repoDeleteReleaseAttachment',
        summary: 'Delete a release attachment',
        tags: ['repository'],
        params: AssetParams,
      },
    },
    async (request, reply) => {
      requireUser(request);
      const repo = requireRepoWriter(request, UnitType.Releases);
      const { id, attachment_id } = request.params;
      await deleteReleaseAttachment(repo, pathId(id), pathId(attachment_id));
      return reply.code(204).send(null);
    },
  );
};
