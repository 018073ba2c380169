import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';

export interface AppOptions {
  logger: FastifyBaseLogger;
}

/** Builds the HTTP application; the caller decides where it listens. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({ loggerInstance: options.logger });
  app.get('/ping', async () => ({ message: 'pong' }));
  return app;
}
