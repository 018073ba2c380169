import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireUser } from '../auth/guards.js';
import { toTag, toTagProtection } from '../convert/release.js';
import {
  createTagProtection,
  editTagProtection,
  getTagProtection,
  listTagProtections,
  removeTagProtection,
} from '../services/protected-tags.js';
import { createTag, deleteTag, getTag, listTags } from '../services/tags.js';
import { UnitType } from '../store/units.js';
import { PageQuerySchema, PathInt } from '../structs/query.js';
import {
  CreateTagOptionSchema,
  CreateTagProtectionOptionSchema,
  EditTagProtectionOptionSchema,
  TagProtectionSchema,
  TagSchema,
} from '../structs/release.js';
import { NoContentSchema } from '../structs/responses.js';
import { pageOf, setTotalCount } from './pagination.js';
import {
  requireRepoAdmin,
  requireRepoReader,
  requireRepoWriter,
  useRepoAssignment,
} from './repo-assignment.js';
import type { ApiRouteOptions } from './route-options.js';

const RepoParams = Type.Object({ owner: Type.String(), repo: Type.String() });
const TagParams = Type.Object({
  owner: Type.String(),
  repo: Type.String(),
  '*': Type.String({ title: 'tag' }),
});
const ProtectionParams = Type.Object({
  owner: Type.String(),
  repo: Type.String(),
  id: PathInt('id of the tag protection'),
});

function protectionId(text: string): number {
  return /^\d{1,15}$/.test(text) ? Number(text) : -1;
}

/**
 * `/repos/{owner}/{repo}/tags…` and `/tag_protections…` (reference §8.5, §6.6–6.7).
 *
 * Long by design: one registration per route of the area, each a schema and a short handler; the rules live in services/.
 */
export const tagRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  useRepoAssignment(app, ctx);

  app.get(
    '/repos/:owner/:repo/tags',
    {
      schema: { querystring: PageQuerySchema, params: RepoParams, response: { 200: Type.Array(TagSchema) } },
    },
    async (request, reply) => {
      const repo = requireRepoReader(request, UnitType.Code);
      const page = pageOf(request, ctx.config);
      const { tags, total } = await listTags(repo, page);
      setTotalCount(reply, total);
      return tags.map((tag) => toTag(ctx.config, repo.owner, repo.repo, tag));
    },
  );

  // Tag names may contain "/", so the name is the rest of the path.
  app.get(
    '/repos/:owner/:repo/tags/*',
    { schema: { params: TagParams, response: { 200: TagSchema } } },
    async (request) => {
      const repo = requireRepoReader(request, UnitType.Code);
      return toTag(ctx.config, repo.owner, repo.repo, await getTag(repo, request.params['*']));
    },
  );

  app.post(
    '/repos/:owner/:repo/tags',
    { schema: { params: RepoParams, body: CreateTagOptionSchema, response: { 201: TagSchema } } },
    async (request, reply) => {
      requireUser(request);
      const repo = requireRepoWriter(request, UnitType.Code);
      const tag = await createTag(repo, request.body);
      return reply.code(201).send(toTag(ctx.config, repo.owner, repo.repo, tag));
    },
  );

  app.delete(
    '/repos/:owner/:repo/tags/*',
    { schema: { params: TagParams, response: { 204: NoContentSchema } } },
    async (request, reply) => {
      requireUser(request);
      const repo = requireRepoWriter(request, UnitType.Code);
      await deleteTag(repo, request.params['*']);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/repos/:owner/:repo/tag_protections',
    { schema: { params: RepoParams, response: { 200: Type.Array(TagProtectionSchema) } } },
    async (request) => {
      requireUser(request);
      const repo = requireRepoAdmin(request);
      return (await listTagProtections(repo)).map(toTagProtection);
    },
  );

  app.post(
    '/repos/:owner/:repo/tag_protections',
    {
      schema: {
        params: RepoParams,
        body: CreateTagProtectionOptionSchema,
        response: { 201: TagProtectionSchema },
      },
    },
    async (request, reply) => {
      requireUser(request);
      const repo = requireRepoAdmin(request);
      return reply.code(201).send(toTagProtection(await createTagProtection(repo, request.body)));
    },
  );

  app.get(
    '/repos/:owner/:repo/tag_protections/:id',
    { schema: { params: ProtectionParams, response: { 200: TagProtectionSchema } } },
    async (request) => {
      requireUser(request);
      const repo = requireRepoAdmin(request);
      return toTagProtection(await getTagProtection(repo, protectionId(request.params.id)));
    },
  );

  app.patch(
    '/repos/:owner/:repo/tag_protections/:id',
    {
      schema: {
        params: ProtectionParams,
        body: EditTagProtectionOptionSchema,
        response: { 200: TagProtectionSchema },
      },
    },
    async (request) => {
      requireUser(request);
      const repo = requireRepoAdmin(request);
      return toTagProtection(await editTagProtection(repo, protectionId(request.params.id), request.body));
    },
  );

  app.delete(
    '/repos/:owner/:repo/tag_protections/:id',
    { schema: { params: ProtectionParams, response: { 204: NoContentSchema } } },
    async (request, reply) => {
      requireUser(request);
      const repo = requireRepoAdmin(request);
      await removeTagProtection(repo, protectionId(request.params.id));
      return reply.code(204).send(null);
    },
  );
};
