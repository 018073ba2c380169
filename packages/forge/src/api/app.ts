import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  LogController,
} from 'fastify';
import { applySudo, assertAccountMayUseApi, authenticate } from '../auth/chain.js';
import { ANONYMOUS, type AuthInfo, type SignatureVerifier } from '../auth/context.js';
import { checkSignedBodyDigest, createSignatureVerifier } from '../auth/httpsig-auth.js';
import { createOAuthTokenVerifier, type OAuthTokenVerifier } from '../auth/oauth2.js';
import { openReadView } from '../cache/read-view.js';
import { lazyRequestLogger, redactingLogger, redactUrl } from '../log.js';
import { oauthRoutes } from '../oauth/routes.js';
import { loadSigningKey } from '../oauth/signing-key.js';
import type { ServiceContext } from '../services/context.js';
import { flushTokenUses } from '../services/token-use.js';
import { PARAM_TYPE_KEYWORD } from '../structs/query.js';
import { archiveRoutes } from '../web/archives.js';
import { avatarRoutes } from '../web/avatars.js';
import { downloadRoutes } from '../web/downloads.js';
import { metricsRoutes } from '../web/metrics.js';
import { pageRoutes } from '../web/pages.js';
import { adminUsersRoutes } from './admin-users.js';
import { recordApiRoutes } from './api-document.js';
import { apiDocumentRoutes } from './api-document-routes.js';
import { archiveApiRoutes } from './archives.js';
import { commitRoutes } from './commits.js';
import { contentsReadRoutes } from './contents.js';
import { contentsWriteRoutes } from './contents-writes.js';
import { installErrorMapper } from './errors.js';
import { gitHttpRoutes } from './git-http.js';
import { adminHookRoutes, orgHookRoutes, repoHookRoutes, userHookRoutes } from './hooks.js';
import { installInputGuards } from './input-guards.js';
import { oauth2AppsRoutes } from './oauth2-apps.js';
import { orgsRoutes } from './orgs.js';
import { releaseAssetRoutes } from './release-assets.js';
import { releaseRoutes } from './releases.js';
import { repoListingRoutes } from './repo-listings.js';
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

/**
 * Builds the HTTP application; the caller decides where it listens.
 *
 * Long by design: the composition root — plugins, hooks and route groups in the order a request meets them.
 */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { ctx } = options;
  const logger = redactingLogger(options.logger);
  const debug = ['debug', 'trace'].includes(logger.level);
  const app = Fastify({
    loggerInstance: logger,
    // Two info lines per request cost a large share of throughput: requests are logged at debug level.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyRequestLogger,
    // Query parameter schemas carry the type Gitea's document gives them (structs/query.ts).
    // Gitea's JSON decoder refuses a number or boolean where a string is due (and vice versa): bodies are
    // validated as sent, never coerced (`tag_name: 1` is a 422, not a tag named "1").
    ajv: { customOptions: { coerceTypes: false, keywords: [PARAM_TYPE_KEYWORD] } },
    // A path whose percent-encoding decodes to no text names nothing: the 404 of any unknown name.
    frameworkErrors: (error, _request, reply: FastifyReply) => {
      const url = `${ctx.config.appUrl}api/swagger`;
      if (error.code === 'FST_ERR_BAD_URL') {
        return reply.code(404).send({ errors: null, message: "The target couldn't be found.", url });
      }
      return reply.code(400).send({ message: error.message, url });
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
  if (debug) {
    app.addHook('onResponse', (request, reply, done) => {
      request.log.debug(
        {
          method: request.method,
          url: redactUrl(request.url),
          status: reply.statusCode,
          ms: reply.elapsedTime,
        },
        'request',
      );
      done();
    });
  }
  app.decorateRequest('auth', null as unknown as AuthInfo);
  app.decorateRequest('readView', undefined);
  installErrorMapper(app, () => `${ctx.config.appUrl}api/swagger`);
  // Before authentication: credentials and names with NUL or lone surrogates never reach the database.
  installInputGuards(app);

  const signatureVerifier = options.signatureVerifier ?? createSignatureVerifier(ctx);
  // The signing key is read once per process; OAuth2 access tokens are then verified without a key lookup.
  const signingKey = ctx.config.oauth2.enabled ? await loadSigningKey(ctx) : null;
  const oauthVerifier: OAuthTokenVerifier | undefined = signingKey
    ? createOAuthTokenVerifier(ctx, signingKey)
    : undefined;
  // The auth chain runs before every API route, so route groups only read `request.auth`.
  app.addHook('onRequest', async (request, reply) => {
    request.auth = ANONYMOUS;
    const { skipApiAuth, pathUser, keepsAnswers } = request.routeOptions.config;
    if (skipApiAuth) return;
    // The request's one stamp, read before anything else it reads (the caller first of all).
    const query = request.query as Record<string, unknown>;
    request.readView = await openReadView(ctx, {
      method: request.method,
      keepsAnswers: keepsAnswers === true,
      mayPresentToken:
        request.headers.authorization !== undefined ||
        query.token !== undefined ||
        query.access_token !== undefined,
    });
    if (pathUser) {
      const name = (request.params as Record<string, string | undefined>)[pathUser];
      if (name !== undefined) request.pathUser = { lowerName: name.toLowerCase() };
    }
    const auth = await authenticate(ctx, request, reply, signatureVerifier, oauthVerifier);
    request.auth = auth;
    assertAccountMayUseApi(ctx, auth);
    request.auth = await applySudo(ctx, request, auth);
  });
  app.addHook('preParsing', checkSignedBodyDigest);
  // Token uses noted in memory (services/token-use.ts) are written before the database closes.
  app.addHook('onClose', () => flushTokenUses(ctx));

  // One plugin per URL area; each applies its token-scope category as an onRequest hook.
  const api = { prefix: '/api/v1', ctx };
  // Every API route is recorded as registered; the API document is generated from them.
  const apiRoutes = recordApiRoutes(app);
  await app.register(serverInfoRoutes, api);
  await app.register(usersRoutes, api);
  await app.register(currentUserRoutes, api);
  await app.register(userOrgsRoutes, api);
  await app.register(tokensRoutes, api);
  await app.register(oauth2AppsRoutes, api);
  await app.register(adminUsersRoutes, api);
  await app.register(orgsRoutes, api);
  await app.register(teamsRoutes, api);
  await app.register(sshPrincipalRoutes, api);
  await app.register(repoListingRoutes, api);
  await app.register(repoRoutes, api);
  await app.register(commitRoutes, api);
  await app.register(contentsReadRoutes, api);
  await app.register(contentsWriteRoutes, api);
  await app.register(releaseRoutes, api);
  await app.register(releaseAssetRoutes, api);
  await app.register(archiveApiRoutes, api);
  await app.register(tagRoutes, api);
  await app.register(repoTeamRoutes, api);
  await app.register(repoHookRoutes, api);
  await app.register(orgHookRoutes, api);
  await app.register(userHookRoutes, api);
  await app.register(adminHookRoutes, api);
  // The OAuth2 provider lives at Gitea's paths outside the API root (/login/oauth/*, /.well-known/…).
  if (signingKey && oauthVerifier) {
    await app.register(oauthRoutes, { ctx, key: signingKey, verifyAccessToken: oauthVerifier });
  }
  // Git smart HTTP lives outside the API root: <app-url>/<owner>/<repo>.git/…
  await app.register(apiDocumentRoutes, { ctx, routes: apiRoutes });
  await app.register(gitHttpRoutes, { ctx });
  // The web side html links point at (src/web): downloads, archives, avatars, read-only pages.
  await app.register(downloadRoutes, { ctx });
  await app.register(archiveRoutes, { ctx });
  await app.register(avatarRoutes, { ctx });
  await app.register(metricsRoutes, { ctx });
  await app.register(pageRoutes, { ctx });
  return app;
}
