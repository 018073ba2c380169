import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { type CommitParts, toCommit, toReference } from '../convert/commit.js';
import { Invalid } from '../errors.js';
import { getRepoCommit, listRepoCommits, listRepoRefs } from '../services/commits.js';
import { UnitType } from '../store/units.js';
import {
  CommitListQuerySchema,
  CommitQuerySchema,
  CommitSchema,
  ReferenceSchema,
} from '../structs/commit.js';
import { formOptionalBool, formString } from './form.js';
import { pageOf, setLinkHeader, setTotalCount } from './pagination.js';
import { requireRepoReader, useRepoAssignment } from './repo-assignment.js';
import type { ApiRouteOptions } from './route-options.js';

const RepoParams = Type.Object({ owner: Type.String(), repo: Type.String() });

/** Gitea's ParseCommitOptions: each part is on unless the caller sends a false value. */
function commitParts(query: Record<string, unknown>): CommitParts {
  return {
    stat: formOptionalBool(query.stat) ?? true,
    verification: formOptionalBool(query.verification) ?? true,
    files: formOptionalBool(query.files) ?? true,
  };
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

/** An RFC 3339 time as unix seconds; undefined when absent, 422 when malformed. */
function dateParam(name: string, value: unknown): number | undefined {
  const text = formString(value);
  if (text === '') return undefined;
  const ms = RFC3339.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(ms)) throw new Invalid(`invalid ${name}: expected an RFC 3339 date-time, got "${text}"`);
  return Math.floor(ms / 1000);
}

/** The legacy page headers Gitea still sets on the commit list, exposed to browsers. */
function setLegacyPageHeaders(reply: FastifyReply, page: number, pageSize: number, total: number): void {
  const pageCount = Math.ceil(total / pageSize);
  reply.header('X-Page', String(page));
  reply.header('X-PerPage', String(pageSize));
  reply.header('X-Total', String(total));
  reply.header('X-PageCount', String(pageCount));
  reply.header('X-HasMore', String(page < pageCount));
  const current = reply.getHeader('Access-Control-Expose-Headers');
  const added = 'X-Page, X-PerPage, X-Total, X-PageCount, X-HasMore';
  reply.header('Access-Control-Expose-Headers', current ? `${current}, ${added}` : added);
}

/** Commit history, single commits and refs (Gitea's repo/commits.go and repo/git_ref.go). */
export const commitRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  useRepoAssignment(app, ctx);

  app.get(
    '/repos/:owner/:repo/commits',
    {
      schema: {
        params: RepoParams,
        querystring: CommitListQuerySchema,
        response: { 200: Type.Array(CommitSchema) },
      },
    },
    async (request, reply) => {
      const repo = requireRepoReader(request, UnitType.Code);
      const query = request.query as Record<string, unknown>;
      const listPage = pageOf(request, ctx.config);
      const parts = commitParts(query);
      const result = await listRepoCommits(repo, {
        sha: formString(query.sha),
        path: formString(query.path),
        since: dateParam('since', query.since),
        until: dateParam('until', query.until),
        not: formString(query.not),
        page: listPage.requested,
        limit: listPage.limit,
        parts,
      });
      const page = { ...listPage, limit: result.pageSize };
      setLinkHeader(reply, request, ctx.config, result.total, page);
      setTotalCount(reply, result.total);
      setLegacyPageHeaders(reply, result.page, result.pageSize, result.total);
      return result.commits.map((details) => toCommit(ctx.config, repo.owner, repo.repo, details, parts));
    },
  );

  app.get(
    '/repos/:owner/:repo/git/commits/:sha',
    {
      schema: {
        params: Type.Object({ owner: Type.String(), repo: Type.String(), sha: Type.String() }),
        querystring: CommitQuerySchema,
        response: { 200: CommitSchema },
      },
    },
    async (request) => {
      const repo = requireRepoReader(request, UnitType.Code);
      const parts = commitParts(request.query as Record<string, unknown>);
      const details = await getRepoCommit(repo, request.params.sha, parts);
      return toCommit(ctx.config, repo.owner, repo.repo, details, parts);
    },
  );

  const refsHandler = async (request: Parameters<typeof requireRepoReader>[0], filter: string) => {
    const repo = requireRepoReader(request, UnitType.Code);
    const { refs, exact } = await listRepoRefs(repo, filter);
    return { rendered: refs.map((ref) => toReference(ctx.config, repo.owner, repo.repo, ref)), exact };
  };

  app.get(
    '/repos/:owner/:repo/git/refs',
    { schema: { params: RepoParams, response: { 200: Type.Array(ReferenceSchema) } } },
    async (request) => (await refsHandler(request, '')).rendered,
  );

  // Ref names contain slashes: the filter is the rest of the path.
  app.get(
    '/repos/:owner/:repo/git/refs/*',
    {
      schema: {
        params: Type.Object({
          owner: Type.String(),
          repo: Type.String(),
          '*': Type.String({ title: 'ref' }),
        }),
        response: { 200: Type.Union([ReferenceSchema, Type.Array(ReferenceSchema)]) },
      },
    },
    async (request) => {
      // One ref matching the filter in full is answered as an object, as Gitea does.
      const { rendered, exact } = await refsHandler(request, request.params['*']);
      return exact ? rendered[0]! : rendered;
    },
  );
};
