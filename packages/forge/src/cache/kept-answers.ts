import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler, onSendHookHandler } from 'fastify';
import { repositoriesKey } from '../auth/context.js';
import type { KeptAnswer, ReadView } from './read-view.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when this request's answer is to be kept (see keptAnswers). */
    keepAnswer?: {
      keep: (answer: KeptAnswer) => void;
      before: Set<string>;
    };
  }
}

type Query = Record<string, string | string[] | undefined>;

/**
 * Everything a kept answer's handler reads besides the database: the URL (path and query, as sent), who
 * asks, with what token scope and repository limit. Null when the request is not to be kept: not a GET; a token in the
 * query (it would be part of the key); Sudo (the answer then also depends on who sudoes); an HTTP
 * signature (its body digest is checked after this hook would answer).
 */
function answerKey(request: FastifyRequest): string | null {
  if (request.method !== 'GET') return null;
  const query = request.query as Query;
  if (query.token !== undefined || query.access_token !== undefined || query.sudo !== undefined) return null;
  if (request.headers.sudo !== undefined) return null;
  const auth = request.auth;
  if (auth.method === 'signature') return null;
  return `${request.url}\n${auth.user?.id ?? ''}\n${auth.method}\n${auth.scopeText}\n${auth.publicOnly}\n${repositoriesKey(auth)}`;
}

/**
 * Route hooks that keep a GET route's successful answer (JSON bytes and the headers its handler set) in
 * the read cache (cache/read-view.ts) and answer the next identical request from it while the
 * database is unchanged, before the route's own lookups run. The route-level onRequest hook runs after
 * authentication and the plugin's token-scope hooks, so those still refuse as before. Only for routes
 * whose answers derive purely from database rows and config: nothing from the clock or git.
 */
export function keptAnswers(): {
  onRequest: onRequestAsyncHookHandler;
  onSend: onSendHookHandler;
  config: { keepsAnswers: true };
} {
  const onRequest = async (request: FastifyRequest, reply: FastifyReply) => {
    const view: ReadView | undefined = request.readView;
    if (!view?.enabled) return;
    const key = answerKey(request);
    if (key === null) return;
    const kept = view.answer(key);
    if (kept.hit) {
      for (const [name, value] of kept.hit.headers) reply.header(name, value);
      return reply.send(kept.hit.body);
    }
    if (!kept.keep) return;
    // Headers set so far (authentication's) are set again on every request; the rest are the answer's.
    request.keepAnswer = {
      keep: kept.keep,
      before: new Set(Object.keys(reply.getHeaders())),
    };
  };
  const onSend: onSendHookHandler = (request, reply, payload, done) => {
    const pending = request.keepAnswer;
    if (pending && reply.statusCode === 200 && (typeof payload === 'string' || Buffer.isBuffer(payload))) {
      const headers: [string, string][] = [];
      for (const [name, value] of Object.entries(reply.getHeaders())) {
        if (pending.before.has(name) || name === 'content-length' || value === undefined) continue;
        headers.push([name, String(value)]);
      }
      pending.keep({ headers, body: Buffer.from(payload) });
    }
    done(null, payload);
  };
  // The config flag makes api/app.ts read the stamp for the route's requests (cache/read-view.ts).
  return { onRequest: onRequest as onRequestAsyncHookHandler, onSend, config: { keepsAnswers: true } };
}
