import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireUser } from '../auth/guards.js';
import { keptAnswers } from '../cache/kept-answers.js';
import { toAttachment } from '../convert/attachment.js';
import { toRelease } from '../convert/release.js';
import { toUser } from '../convert/user.js';
import { attachmentsOfReleases } from '../services/attachments.js';
import {
  createRelease,
  deleteRelease,
  editRelease,
  getLatestRelease,
  getReleaseById,
  getReleaseByTag,
  listReleases,
} from '../services/releases.js';
import type { RepoContext } from '../services/repo-context.js';
import { usersForRows } from '../services/users.js';
import type { AttachmentRow, ReleaseRow } from '../store/schema.js';
import { UnitType } from '../store/units.js';
import { PathInt64 } from '../structs/query.js';
import {
  CreateReleaseOptionSchema,
  EditReleaseOptionSchema,
  ReleaseListQuerySchema,
  ReleaseSchema,
} from '../structs/release.js';
import { NoContentSchema } from '../structs/responses.js';
import type { User } from '../structs/user.js';
import { pageOf, setListHeaders } from './pagination.js';
import { requireRepoReader, requireRepoWriter, useRepoAssignment } from './repo-assignment.js';
import type { ApiRouteOptions } from './route-options.js';

const RepoParams = Type.Object({ owner: Type.String(), repo: Type.String() });
const ReleaseParams = Type.Object({
  owner: Type.String(),
  repo: Type.String(),
  id: PathInt64('id of the release'),
});
// Tag names may contain "/", so the tag is the rest of the path.
const TagParams = Type.Object({
  owner: Type.String(),
  repo: Type.String(),
  '*': Type.String({ title: 'tag' }),
});

/** Go's `strconv.ParseBool` as `ctx.FormOptionalBool` uses it: anything else means "not given". */
function optionalBool(value: unknown): boolean | undefined {
  if (typeof value !== 'string') return undefined;
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(value)) return false;
  return undefined;
}

/** A release id from the path; anything that is not a positive int64 finds nothing. */
function releaseId(text: string): number {
  return /^\d{1,15}$/.test(text) ? Number(text) : -1;
}

/**
 * Renders release rows with their publishers (deleted publishers become Ghost) and assets (`assets`
 * when the rows' statement read them already).
 */
async function renderReleases(repo: RepoContext, rows: ReleaseRow[], assets?: Map<number, AttachmentRow[]>) {
  // Publishers and the assets of the whole page: two queries however long the page is, none for the
  // publishers when the owner or the caller (read for this request already) published every release.
  const [publisherOf, attachments] = await Promise.all([
    usersForRows(
      repo,
      rows.map((row) => row.publisher_id),
      [repo.owner, repo.doer],
    ),
    assets ??
      attachmentsOfReleases(
        repo,
        rows.map((row) => row.id),
      ),
  ]);
  // A page usually has one or two publishers: render each once.
  const authors = new Map<number, User>();
  const authorOf = (id: number) => {
    let author = authors.get(id);
    if (!author) {
      author = toUser(repo.config, publisherOf(id), null);
      authors.set(id, author);
    }
    return author;
  };
  return rows.map((row) =>
    toRelease(
      repo.config,
      repo.owner,
      repo.repo,
      row,
      authorOf(row.publisher_id),
      (attachments.get(row.id) ?? []).map((attachment) => toAttachment(repo.config, attachment)),
    ),
  );
}

async function renderRelease(repo: RepoContext, row: ReleaseRow) {
  const [release] = await renderReleases(repo, [row]);
  return release!;
}

/**
 * `/repos/{owner}/{repo}/releases…` (seed Releases section, reference §6).
 *
 * Long by design: one registration per route of the area, each a schema and a short handler; the rules live in services/.
 */
export const releaseRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  useRepoAssignment(app, ctx);
  // The list and the latest release derive from rows only (the tag lookups read git).
  const kept = keptAnswers();

  app.get(
    '/repos/:owner/:repo/releases',
    {
      ...kept,
      schema: {
        querystring: ReleaseListQuerySchema,
        params: RepoParams,
        response: { 200: Type.Array(ReleaseSchema) },
      },
    },
    async (request, reply) => {
      const repo = requireRepoReader(request, UnitType.Releases);
      const query = request.query as Record<string, unknown>;
      const page = pageOf(request, ctx.config);
      const { rows, total, attachments } = await listReleases(repo, {
        draft: optionalBool(query.draft),
        prerelease: optionalBool(query['pre-release']),
        limit: page.limit,
        offset: page.offset,
      });
      setListHeaders(reply, request, ctx.config, total, page);
      return renderReleases(repo, rows, attachments);
    },
  );

  app.get(
    '/repos/:owner/:repo/releases/latest',
    { ...kept, schema: { params: RepoParams, response: { 200: ReleaseSchema } } },
    async (request) => {
      const repo = requireRepoReader(request, UnitType.Releases);
      // Release, publisher and attachments come from one statement (the list reads them per page).
      const { release, publisher, attachments } = await getLatestRelease(repo);
      return toRelease(
        repo.config,
        repo.owner,
        repo.repo,
        release,
        toUser(repo.config, publisher, null),
        attachments.map((attachment) => toAttachment(repo.config, attachment)),
      );
    },
  );

  app.get(
    '/repos/:owner/:repo/releases/tags/*',
    { schema: { params: TagParams, response: { 200: ReleaseSchema } } },
    async (request) => {
      const repo = requireRepoReader(request, UnitType.Releases);
      return renderRelease(repo, await getReleaseByTag(repo, request.params['*']));
    },
  );

  app.delete(
    '/repos/:owner/:repo/releases/tags/*',
    { schema: { params: TagParams, response: { 204: NoContentSchema } } },
    async (request, reply) => {
      requireUser(request);
      const repo = requireRepoWriter(request, UnitType.Releases);
      const row = await getReleaseByTag(repo, request.params['*']);
      await deleteRelease(repo, row);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/repos/:owner/:repo/releases/:id',
    { schema: { params: ReleaseParams, response: { 200: ReleaseSchema } } },
    async (request) => {
      const repo = requireRepoReader(request, UnitType.Releases);
      return renderRelease(repo, await getReleaseById(repo, releaseId(request.params.id)));
    },
  );

  app.post(
    '/repos/:owner/:repo/releases',
    { schema: { params: RepoParams, body: CreateReleaseOptionSchema, response: { 201: ReleaseSchema } } },
    async (request, reply) => {
      requireUser(request);
      const repo = requireRepoWriter(request, UnitType.Releases);
      const row = await createRelease(repo, request.body);
      return reply.code(201).send(await renderRelease(repo, row));
    },
  );

  app.patch(
    '/repos/:owner/:repo/releases/:id',
    { schema: { params: ReleaseParams, body: EditReleaseOptionSchema, response: { 200: ReleaseSchema } } },
    async (request) => {
      requireUser(request);
      const repo = requireRepoWriter(request, UnitType.Releases);
      return renderRelease(repo, await editRelease(repo, releaseId(request.params.id), request.body));
    },
  );

  app.delete(
    '/repos/:owner/:repo/releases/:id',
    { schema: { params: ReleaseParams, response: { 204: NoContentSchema } } },
    async (request, reply) => {
      requireUser(request);
      const repo = requireRepoWriter(request, UnitType.Releases);
      const row = await getReleaseById(repo, releaseId(request.params.id));
      await deleteRelease(repo, row);
      return reply.code(204).send(null);
    },
  );
};
