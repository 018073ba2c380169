import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import { NotFound } from '../errors.js';
import type { ServiceContext } from '../services/context.js';
import { identiconPng, MIN_IDENTICON_SIZE } from './identicon.js';

/** Gitea's DefaultAvatarSize; `?size=` may ask for MIN_IDENTICON_SIZE…MAX_SIZE pixels. */
const DEFAULT_SIZE = 256;
const MAX_SIZE = 512;

/** `?size=`: a decimal integer clamped to the allowed range; anything else is the default. */
function requestedSize(request: FastifyRequest): number {
  const text = (request.query as Record<string, unknown>).size;
  if (typeof text !== 'string' || !/^\d{1,6}$/.test(text)) return DEFAULT_SIZE;
  return Math.min(Math.max(Number(text), MIN_IDENTICON_SIZE), MAX_SIZE);
}

/**
 * Recently drawn identicons (drawing a large one costs a few milliseconds), least recently used out
 * first. An identicon is a pure function of its seed and size, so an entry never goes stale; the cache
 * switch (`[cache] enabled`) still turns it off, so every cached path can be compared with none.
 */
const recent = new LRUCache<string, Buffer>({ max: 256 });

function drawn(seed: string, size: number, cached: boolean): Buffer {
  if (!cached) return identiconPng(seed, size);
  const key = `${seed}:${size}`;
  let image = recent.get(key);
  if (!image) {
    image = identiconPng(seed, size);
    recent.set(key, image);
  }
  return image;
}

/** An identicon never changes for its seed and size: a strong ETag and a day in any cache. */
function sendIdenticon(request: FastifyRequest, reply: FastifyReply, seed: string, cached: boolean) {
  const size = requestedSize(request);
  const etag = `"${seed.slice(0, 64)}-${size}"`;
  reply.header('Cache-Control', 'public, max-age=86400').header('ETag', etag);
  if (request.headers['if-none-match'] === etag) return reply.code(304).send();
  return reply
    .type('image/png')
    .header('X-Content-Type-Options', 'nosniff')
    .send(drawn(seed, size, cached));
}

/**
 * The `avatar_url` of users and organizations: `/avatars/<hash>` (the hash of the e-mail, or of the name
 * when there is none) answers the identicon generated from it; the Ghost and Actions users' default
 * avatar is one fixed identicon.
 */
export const avatarRoutes: FastifyPluginAsync<{ ctx: ServiceContext }> = async (app, { ctx }) => {
  const cached = ctx.config.cache.enabled;
  app.get('/avatars/:hash', async (request, reply) => {
    const { hash } = request.params as { hash: string };
    if (!/^[0-9a-f]{32}$/.test(hash)) throw new NotFound();
    return sendIdenticon(request, reply, hash, cached);
  });

  app.get('/assets/img/avatar_default.png', async (request, reply) =>
    sendIdenticon(request, reply, 'default', cached),
  );
};
