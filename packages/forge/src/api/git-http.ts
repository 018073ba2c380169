import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Forbidden, NotFound, Unauthorized } from '../errors.js';
import { serveHttpBackend } from '../git/http-backend.js';
import { listRefs } from '../git/repository.js';
import { diffRefs } from '../services/push-sync.js';
import type { RepoContext } from '../services/repo-context.js';
import { serialiseRepoWrite } from '../services/repo-write-queue.js';
import { loadRepoContext, repositoriesRoot } from '../services/repos.js';
import { assertTokenReaches } from '../services/token-repositories.js';
import { UnitType } from '../store/units.js';
import { journalRefWrite } from '../webhooks/ref-journal.js';
import type { ApiRouteOptions } from './route-options.js';

/** The smart-HTTP endpoints `git http-backend` serves (the dumb protocol is not offered). */
const SMART_PATHS = new Set(['info/refs', 'git-upload-pack', 'git-receive-pack']);

function challenge(reply: FastifyReply, message: string): Unauthorized {
  reply.header('WWW-Authenticate', 'Basic realm="Gitea"');
  return new Unauthorized(message);
}

/**
 * Gitea's git HTTP access rules: reads need the code unit readable (anonymous callers of private
 * repositories are challenged for credentials), pushes need a signed-in writer; tokens need the
 * repository scope at the matching level.
 */
function authorise(
  request: FastifyRequest,
  reply: FastifyReply,
  repo: RepoContext | null,
  isPush: boolean,
): RepoContext {
  const { user, scope } = request.auth;
  if (scope && !scope.has('repository', isPush ? 'write' : 'read')) {
    throw new Forbidden(`token does not have the required scope ${isPush ? 'write' : 'read'}:repository`);
  }
  if (!repo) {
    if (!user) throw challenge(reply, 'authentication required');
    throw new NotFound('Repository not found');
  }
  if (!repo.permission.canRead(UnitType.Code)) {
    if (!user) throw challenge(reply, 'authentication required');
    throw new NotFound('Repository not found');
  }
  assertTokenReaches(request.auth.repositories, repo.repo);
  if (isPush) {
    if (!user) throw challenge(reply, 'authentication required');
    if (!repo.permission.canWrite(UnitType.Code)) throw new Forbidden('User permission denied');
    if (repo.repo.is_archived === 1) throw new Forbidden('repo is archived');
  }
  return repo;
}

/**
 * Git smart HTTP at `<app-url>/<owner>/<repo>.git/…` through `git http-backend`, with post-push
 * synchronisation of tags, the empty flag, the default branch and push activity.
 */
export const gitHttpRoutes: FastifyPluginAsync<ApiRouteOptions> = async (app, { ctx }) => {
  // Pack data streams straight to git: these bodies are never parsed or buffered.
  app.addContentTypeParser(
    ['application/x-git-upload-pack-request', 'application/x-git-receive-pack-request'],
    (_request, _payload, done) => done(null, undefined),
  );

  app.route({
    method: ['GET', 'POST'],
    url: '/:owner/:repo/*',
    handler: async (request, reply) => {
      const { owner, repo: repoSegment, '*': servicePath } = request.params as Record<string, string>;
      const repoName = repoSegment?.replace(/\.git$/, '') ?? '';
      if (!owner || !repoName || !servicePath || !SMART_PATHS.has(servicePath)) throw new NotFound();
      const query = new URLSearchParams(request.url.split('?')[1] ?? '');
      const isPush =
        servicePath === 'git-receive-pack' ||
        (servicePath === 'info/refs' && query.get('service') === 'git-receive-pack');
      const found = await loadRepoContext(ctx, owner, repoName, request.auth.user).catch((error: unknown) => {
        if (error instanceof NotFound) return null;
        throw error;
      });
      const repo = authorise(request, reply, found, isPush);

      const run = async () => {
        const before = servicePath === 'git-receive-pack' ? await listRefs(repo.gitDir) : null;
        const pusher = repo.doer;
        const source = pusher
          ? { ctx, gitDir: repo.gitDir, repo: repo.repo, owner: repo.owner, pusher }
          : null;
        // Journalled before git may change a ref, so a crash after the change still announces it.
        const journal = before && source ? await journalRefWrite(source, before, true) : null;
        reply.hijack();
        try {
          await serveHttpBackend(
            {
              projectRoot: repositoriesRoot(ctx),
              pathInfo: `/${repo.owner.lower_name}/${repo.repo.lower_name}.git/${servicePath}`,
              queryString: query.toString(),
              method: request.method,
              contentType: request.headers['content-type'],
              contentEncoding: request.headers['content-encoding'],
              remoteUser: repo.doer?.name,
              remoteAddr: request.ip,
              gitProtocol: request.headers['git-protocol'] as string | undefined,
              body: request.raw,
              beforeEnd: async () => {
                if (!before || !journal) return;
                try {
                  await journal.announce(diffRefs(before, await listRefs(repo.gitDir)));
                } catch (error) {
                  // The journal row stays: the delivery worker's repair announces the push later.
                  request.log.error({ err: error, repo: repo.repo.id }, 'post-push synchronisation failed');
                }
              },
            },
            reply.raw,
          );
        } finally {
          journal?.release();
        }
      };
      try {
        await (servicePath === 'git-receive-pack' ? serialiseRepoWrite(repo.repo.id, run) : run());
      } catch (error) {
        request.log.error({ err: error }, 'git http-backend failed');
        if (!reply.raw.headersSent) {
          reply.raw.statusCode = 500;
          reply.raw.end();
        } else {
          reply.raw.destroy();
        }
      }
    },
  });
};
