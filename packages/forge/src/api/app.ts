import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { applySudo, assertAccountMayUseApi, authenticate } from '../auth/chain.js';
import { ANONYMOUS, type AuthInfo, type SignatureVerifier } from '../auth/context.js';
import { checkSignedBodyDigest, createSignatureVerifier } from '../auth/httpsig-auth.js';
import type { ServiceContext } from '../services/context.js';
import { adminUsersRoutes } from './admin-users.js';
import { installErrorMapper } from './errors.js';
import { gitHttpRoutes } from './git-http.js';
import { orgsRoutes } from './orgs.js';
import { releaseRoutes } from './releases.js';
import { repoTeamRoutes } from './repo-teams.js';
import { repoRoutes } from './repos.js';
import { serverInfoRoutes } from './server-info.js';
import { sshPrincipalRoutes } from './ssh-principals.js';
import { tagRoutes } from './tags.js';
import { teamsRoutes } from './teams.js';
import { tokensRoutes } from './tokens.js';
import { currentUserRoutes } from './user.js';
import { userOrgsRoutes } from './user-orgs.js';
import { usersRoutes } from './users.js';

export interface AppOptions {
  logger: FastifyBaseLogger;
  ctx: ServiceContext;
  /** HTTP-signature verifier (src/auth/httpsig*.ts); without it signatures are not an auth method. */
  signatureVerifier?: SignatureVerifier;
}

/** Builds the HTTP application; the caller decides where it listens. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { ctx } = options;
  const debug = ['debug', 'trace'].includes(options.logger.level);
  const app = Fastify({
    loggerInstance: options.logger,
    // Two info lines per request cost a large share of throughput: requests are logged at debug level.
    logController: new LogController({ disableRequestLogging: true }),
  }).withTypeProvider<TypeBoxTypeProvider>();
  if (debug) {
    app.addHook('onResponse', (request, reply, done) => {
      request.log.debug(
        { method: request.method, url: request.url, status: reply.statusCode, ms: reply.elapsedTime },
        'request',
      );
      done();
    });
  }
  app.decorateRequest('auth', null as unknown as AuthInfo);
  installErrorMapper(app, () => `${ctx.config.appUrl}api/swagger`);

  const signatureVerifier = options.signatureVerifier ?? createSignatureVerifier(ctx);
  // The auth chain runs before every route, so route groups only read `request.auth`.
  app.addHook('onRequest', async (request, reply) => {
    request.auth = ANONYMOUS;
    const auth = await authenticate(ctx, request, reply, signatureVerifier);
    request.auth = auth;
    assertAccountMayUseApi(ctx, auth);
    request.auth = await applySudo(ctx, request, auth);
  });
  app.addHook('preParsing', checkSignedBodyDigest);

  // One plugin per URL area; each applies its token-scope category as an onRequest hook.
  const api = { prefix: '/api/v1', ctx };
  await app.register(serverInfoRoutes, api);
  await app.register(usersRoutes, api);
  await app.register(currentUserRoutes, api);
  await app.register(userOrgsRoutes, api);
  await app.register(tokensRoutes, api);
  await app.register(adminUsersRoutes, api);
  await app.register(orgsRoutes, api);
  await app.register(teamsRoutes, api);
  await app.register(sshPrincipalRoutes, api);
  await app.register(repoRoutes, api);
  await app.register(releaseRoutes, api);
  await app.register(tagRoutes, api);
  await app.register(repoTeamRoutes, api);
  // Git smart HTTP lives outside the API root: <app-url>/<owner>/<repo>.git/…
  await app.register(gitHttpRoutes, { ctx });
  return app;
}
