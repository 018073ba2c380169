import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { requireUser } from '../auth/guards.js';
import { UNSIGNED_VERIFICATION } from '../convert/commit.js';
import { toContentsResponse, toFileCommitResponse } from '../convert/contents.js';
import {
  type ChangeFilesInput,
  type ChangeFilesResult,
  changeRepoFiles,
  type FileOperationInput,
} from '../services/file-changes.js';
import type { RepoContext } from '../services/repo-context.js';
import { UnitType } from '../store/units.js';
import {
  ChangeFilesOptionsSchema,
  CreateFileOptionsSchema,
  DeleteFileOptionsSchema,
  FileDeleteResponseSchema,
  FileResponseSchema,
  FilesResponseSchema,
  UpdateFileOptionsSchema,
} from '../structs/contents.js';
import { requireRepoWriter, useRepoAssignment } from './repo-assignment.js';
import type { ApiRouteOptions } from './route-options.js';

/**
 * Largest JSON body a contents write accepts: 48 MiB of file content in base64, plus the rest. Larger
 * bodies are refused (413) while they stream in, before anything is decoded or written.
 */
export const CONTENTS_BODY_LIMIT = 64 * 1024 * 1024;

const RepoParams = Type.Object({ owner: Type.String(), repo: Type.String() });
const FileParams = Type.Object({
  owner: Type.String(),
  repo: Type.String(),
  '*': Type.String({ title: 'filepath' }),
});

/** The fields every write shares (Gitea's FileOptions), as the service takes them. */
function commonOptions(body: {
  branch?: string;
  new_branch?: string;
  message?: string;
  author?: ChangeFilesInput['author'];
  committer?: ChangeFilesInput['committer'];
  dates?: ChangeFilesInput['dates'];
  signoff?: boolean;
}): Omit<ChangeFilesInput, 'files'> {
  return {
    branch: body.branch,
    newBranch: body.new_branch,
    message: body.message,
    author: body.author,
    committer: body.committer,
    dates: body.dates,
    signoff: body.signoff,
  };
}

/** Gitea's reqToken + reqRepoWriter(code) for every write. */
function writer(request: FastifyRequest): RepoContext {
  requireUser(request);
  return requireRepoWriter(request, UnitType.Code);
}

/**
 * Makes the change. The answer reflects the branch: once it has moved the request succeeds, and a
 * failure to announce the commit is only logged (the ref journal's repair announces it).
 */
async function change(request: FastifyRequest, repo: RepoContext, input: ChangeFilesInput) {
  const result = await changeRepoFiles(repo, input);
  if (result.announceError !== undefined) {
    request.log.error(
      { err: result.announceError, commit: result.commit.sha },
      'contents commit made; announcing it failed and is left to the ref journal repair',
    );
  }
  return result;
}

/**
 * Writing files: one commit per request (Gitea's repo/file.go writes).
 *
 * Long by design: one registration per route of the area, each a schema and a short handler; the rules live in services/.
 */
export const contentsWriteRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  useRepoAssignment(app, ctx);

  const render = (repo: RepoContext, result: ChangeFilesResult) => ({
    files: result.files.map((file) =>
      file
        ? toContentsResponse(
            ctx.config,
            repo.owner,
            repo.repo,
            result.ref,
            file.path,
            file.entry,
            file.extras,
          )
        : null,
    ),
    commit: toFileCommitResponse(ctx.config, repo.owner, repo.repo, result.commit),
    verification: UNSIGNED_VERIFICATION,
  });
  const single = (repo: RepoContext, result: ChangeFilesResult) => {
    const { files, commit, verification } = render(repo, result);
    return { content: files[0]!, commit, verification };
  };
  const one = async (
    request: FastifyRequest,
    body: Parameters<typeof commonOptions>[0],
    file: FileOperationInput,
  ) => {
    const repo = writer(request);
    return { repo, result: await change(request, repo, { ...commonOptions(body), files: [file] }) };
  };

  app.post(
    '/repos/:owner/:repo/contents',
    {
      bodyLimit: CONTENTS_BODY_LIMIT,
      schema: { params: RepoParams, body: ChangeFilesOptionsSchema, response: { 201: FilesResponseSchema } },
    },
    async (request, reply) => {
      const repo = writer(request);
      const files = request.body.files.map(
        (file): FileOperationInput => ({
          operation: file.operation,
          path: file.path,
          content: file.content,
          sha: file.sha,
          fromPath: file.from_path,
        }),
      );
      const result = await change(request, repo, { ...commonOptions(request.body), files });
      return reply.code(201).send(render(repo, result));
    },
  );

  app.post(
    '/repos/:owner/:repo/contents/*',
    {
      bodyLimit: CONTENTS_BODY_LIMIT,
      schema: { params: FileParams, body: CreateFileOptionsSchema, response: { 201: FileResponseSchema } },
    },
    async (request, reply) => {
      const { body } = request;
      const { repo, result } = await one(request, body, {
        operation: 'create',
        path: request.params['*'],
        content: body.content,
      });
      return reply.code(201).send(single(repo, result));
    },
  );

  app.put(
    '/repos/:owner/:repo/contents/*',
    {
      bodyLimit: CONTENTS_BODY_LIMIT,
      schema: { params: FileParams, body: UpdateFileOptionsSchema, response: { 200: FileResponseSchema } },
    },
    async (request) => {
      const { body } = request;
      const { repo, result } = await one(request, body, {
        operation: 'update',
        path: request.params['*'],
        content: body.content,
        sha: body.sha,
        fromPath: body.from_path,
      });
      return single(repo, result);
    },
  );

  app.delete(
    '/repos/:owner/:repo/contents/*',
    {
      bodyLimit: CONTENTS_BODY_LIMIT,
      schema: {
        params: FileParams,
        body: DeleteFileOptionsSchema,
        response: { 200: FileDeleteResponseSchema },
      },
    },
    async (request) => {
      const { body } = request;
      const { repo, result } = await one(request, body, {
        operation: 'delete',
        path: request.params['*'],
        sha: body.sha,
      });
      const { commit, verification } = render(repo, result);
      return { content: null, commit, verification };
    },
  );
};
