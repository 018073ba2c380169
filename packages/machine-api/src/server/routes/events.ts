/** `GET /events`: the live event stream (Server-Sent Events), resumable with `Last-Event-ID`. */

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { BadRequest } from '../../errors.js';
import { EVENT_TYPES, type EventFilter, type EventType } from '../../events/events.js';
import { EventStream } from '../../events/sse.js';
import { Event, EventHistoryQuery, EventsHeaders, EventsQuery } from '../schemas/events.js';
import { ref } from '../schemas/refs.js';
import { errorResponses, ok, type RouteOptions } from '../types.js';

export interface EventStreamSettings {
  heartbeatMs: number;
  maxBufferedBytes: number;
  retryMs: number;
}

export const DEFAULT_STREAM_SETTINGS: EventStreamSettings = {
  heartbeatMs: 15_000,
  maxBufferedBytes: 4 * 1024 * 1024,
  retryMs: 2_000,
};

export const eventRoutes: FastifyPluginAsyncTypebox<RouteOptions & { stream?: EventStreamSettings }> = async (
  app,
  { context, stream: settings = DEFAULT_STREAM_SETTINGS },
) => {
  const streams = new Set<EventStream>();
  // Open streams would keep the server from closing.
  app.addHook('preClose', (done) => {
    for (const stream of streams) stream.close();
    done();
  });

  app.get(
    '/events',
    {
      schema: {
        operationId: 'get_events',
        summary:
          'Live events as Server-Sent Events: machine state/progress/ready and temperatures, job lifecycle, queue changes. Resume with `Last-Event-ID`.',
        tags: ['events'],
        querystring: EventsQuery,
        headers: EventsHeaders,
        response: {
          200: {
            description: 'a `text/event-stream`; each `data:` line is one Event as JSON',
            content: { 'text/event-stream': { schema: ref(Event) } },
          },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const filter = parseFilter(request.query.machine_id, request.query.types);
      const after = parseLastEventId(request.headers['last-event-id']);
      // The stream starts after what this instance published before the request (on a farm that goes
      // through the database); a cursor first seen on another instance may be ahead of this one for a moment.
      await context.events.settle(after ?? undefined);
      // Headers already set by hooks (CORS, x-request-id) go out with the stream's own.
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(reply.getHeaders())) {
        if (typeof value === 'string' || typeof value === 'number') headers[name] = String(value);
      }
      reply.hijack();
      reply.raw.writeHead(200, {
        ...headers,
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      const stream = new EventStream(reply.raw, context.events, { filter, after, ...settings });
      streams.add(stream);
      reply.raw.on('close', () => streams.delete(stream));
    },
  );

  app.get(
    '/events/history',
    {
      schema: {
        operationId: 'get_event_history',
        summary:
          "The retained events (at least the last hour or 10 000 events) as one JSON array, oldest first: what a page opened now missed, e.g. a machine's temperatures over the last hour.",
        tags: ['events'],
        querystring: EventHistoryQuery,
        response: { 200: ok(Type.Array(ref(Event), { title: 'Array_of_Event' })), ...errorResponses },
      },
    },
    async (request) => {
      const filter = parseFilter(request.query.machine_id, request.query.types);
      // What this instance published before the request is in the answer (on a farm it goes through the database).
      await context.events.settle();
      return context.events.recent(filter, request.query.limit ?? 1000);
    },
  );
};

function parseFilter(machineId: string | undefined, types: string | undefined): EventFilter {
  const filter: EventFilter = {};
  if (machineId !== undefined) filter.machineId = machineId;
  if (types !== undefined) {
    const names = types
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean);
    const unknown = names.filter((name) => !(EVENT_TYPES as readonly string[]).includes(name));
    if (unknown.length > 0 || names.length === 0) {
      throw new BadRequest(
        `types: expected a comma-separated list of ${EVENT_TYPES.join(', ')}; got ${JSON.stringify(types)}`,
      );
    }
    filter.types = names as EventType[];
  }
  return filter;
}

function parseLastEventId(header: string | string[] | undefined): number | null {
  if (header === undefined) return null;
  const text = Array.isArray(header) ? header[0] : header;
  if (text === undefined || !/^\d{1,17}$/.test(text.trim())) {
    throw new BadRequest(`Last-Event-ID: expected the numeric id of an event, got ${JSON.stringify(text)}`);
  }
  return Number(text.trim());
}
