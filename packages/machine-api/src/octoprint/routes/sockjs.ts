/**
 * OctoPrint's push channel as the apps open it: SockJS's raw WebSocket endpoint `sockjs/websocket`
 * (plain JSON text messages, no SockJS framing). The upgrade carries no key: the server first sends
 * `connected`, the app sends `{"auth": "name:session"}` with the session of its passive `api/login`, and
 * from then on gets a `current` frame about once a second (state, temperatures, job, progress). A wrong
 * session gets nothing. The session's key is read again before every frame, so revoking it (or taking
 * away `read`) stops the frames at once.
 */

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import websocket from '@fastify/websocket';
import type { WebSocket } from 'ws';
import { allows } from '../../access/scopes.js';
import { BadRequest } from '../../errors.js';
import type { OctoPrintTarget } from '../base-url.js';
import { jobOf, printerStateOf, temperaturesOf } from '../state.js';
import {
  type OctoPrintContext,
  octoPrintErrorResponses,
  statusOf,
  TargetParams,
  targetOf,
} from './target.js';

/** How often `current` frames go out (OctoPrint sends about two a second; apps redraw with each). */
export const CURRENT_INTERVAL_MS = 1000;
/** Largest message an app may send: an `auth` line is well under a kilobyte. */
const MAX_MESSAGE_BYTES = 16 * 1024;

export const sockJsRoutes: FastifyPluginAsyncTypebox<OctoPrintContext> = async (app, context) => {
  // In a context of its own: the plugin wraps the handler of every route of its context.
  await app.register(websocket, { options: { maxPayload: MAX_MESSAGE_BYTES } });
  const sockets = new Set<WebSocket>();
  app.addHook('preClose', (done) => {
    for (const socket of sockets) socket.close(1001, 'server shutting down');
    done();
  });

  app.route({
    method: 'GET',
    url: '/octoprint/:target/sockjs/websocket',
    schema: {
      operationId: 'octoprint_push_channel',
      summary:
        'OctoPrint push channel (SockJS raw WebSocket; the upgrade needs no key): `connected`, then after `{"auth": "name:session"}` (session from `POST api/login`) a `current` frame about every second. A plain GET answers 400.',
      tags: ['octoprint'],
      params: TargetParams,
      response: { 101: { description: 'switching to the WebSocket protocol' }, ...octoPrintErrorResponses },
    },
    // Before the upgrade: an unknown machine is answered over HTTP, as on every other route.
    preHandler: async (request) => {
      targetOf(context.machines, request.params as { target: string }, request.query);
    },
    handler: async () => {
      throw new BadRequest('Can "Upgrade" only to "WebSocket": this is the push channel');
    },
    wsHandler: (socket, request) => {
      const target = targetOf(context.machines, request.params as { target: string }, request.query);
      sockets.add(socket);
      let auth: string | null = null;
      let timer: NodeJS.Timeout | undefined;
      let sending = false;
      const tick = async () => {
        if (sending || auth === null) return;
        sending = true;
        try {
          const actor = await context.sessions.actor(auth);
          if (!actor || !allows(actor, 'read')) return;
          const frame = await currentFrame(context, target);
          if (socket.readyState === socket.OPEN) socket.send(JSON.stringify({ current: frame }));
        } catch (error) {
          request.log.warn({ err: error }, 'push channel frame failed');
        } finally {
          sending = false;
        }
      };
      socket.on('message', (data, isBinary) => {
        const message = isBinary ? null : parseMessage(data.toString());
        if (typeof message?.auth !== 'string') return;
        // A new auth replaces the old one; a wrong one silences the channel until a right one comes.
        auth = message.auth;
        timer ??= setInterval(() => void tick(), CURRENT_INTERVAL_MS);
        void tick();
      });
      socket.on('close', () => {
        sockets.delete(socket);
        if (timer) clearInterval(timer);
      });
      socket.send(
        JSON.stringify({
          connected: {
            version: '1.10.0',
            display_version: `1.10.0 (machine-api ${context.version})`,
            branch: null,
            plugin_hash: 'machine-api',
            config_hash: 'machine-api',
            debug: false,
            safe_mode: null,
            permissions: [],
          },
        }),
      );
    },
  });
};

function parseMessage(text: string): { auth?: unknown } | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as { auth?: unknown }) : null;
  } catch {
    return null;
  }
}

/** A `current` frame: what `api/printer` and `api/job` answer, in the push channel's layout. */
async function currentFrame(context: OctoPrintContext, target: OctoPrintTarget) {
  const status = await statusOf(context, target);
  const job = target.kind === 'machine' ? await context.currentJob(target.machineId) : null;
  const { job: jobInfo, progress } = jobOf(status, job);
  const now = Date.now();
  const temps: Record<string, unknown> = { time: Math.floor(now / 1000) };
  for (const [sensor, reading] of Object.entries(temperaturesOf(status))) {
    temps[sensor] = { actual: reading.actual, target: reading.target };
  }
  return {
    state: printerStateOf(status),
    job: jobInfo,
    progress,
    currentZ: null,
    offsets: {},
    temps: [temps],
    logs: [],
    messages: [],
    busyFiles: [],
    serverTime: now / 1000,
  };
}
