/** Wire shapes of the event stream (`GET /events`) and its history (`GET /events/history`). */

import { Type } from 'typebox';
import { EVENT_TYPES } from '../../events/events.js';
import { ref } from './refs.js';

export const EventType = Type.Unsafe<(typeof EVENT_TYPES)[number]>({
  $id: 'EventType',
  type: 'string',
  enum: [...EVENT_TYPES],
  description:
    '`machine.state` (data: `state`, `ready`, `busy`, `progress`, `awaiting_clear_since`, `capabilities`), `machine.progress` (data: `progress`), `machine.temperatures` (data: `temperatures`, sensor → `{current, target}`), `job.updated` (data: the `Job`), `queue.changed` (data: `reason`, `depth`), `reset` (data: `message`: reload the state, the history no longer reaches back to `Last-Event-ID`).',
});

export const Event = Type.Object(
  {
    id: Type.Integer({
      description:
        'Increases by one per event (one sequence for the whole farm); send the last one seen as `Last-Event-ID` to resume, on this instance or any other of the farm.',
    }),
    type: ref(EventType),
    instance: Type.String({
      description:
        "The instance that published the event (`[server] instance`): on a farm on several hosts, every instance streams every instance's events in one id order; a `reset` names the instance that sent it.",
    }),
    time: Type.String({ format: 'date-time' }),
    machine_id: Type.Unsafe<string | null>({ type: 'string', nullable: true }),
    job_id: Type.Unsafe<string | null>({ type: 'string', nullable: true }),
    data: Type.Object(
      {},
      { additionalProperties: true, description: 'Depends on `type` (see `EventType`).' },
    ),
  },
  {
    $id: 'Event',
    description:
      'One Server-Sent Event of `GET /events`: the `data:` line is this object as JSON, the `id:` line its `id`.',
  },
);

export const EventsHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({
      maxLength: 20,
      description: 'The `id` of the last event received: the stream resumes after it.',
    }),
  ),
});
export const EventsQuery = Type.Object({
  machine_id: Type.Optional(Type.String({ maxLength: 200, description: 'Only events about this machine.' })),
  types: Type.Optional(
    Type.String({
      maxLength: 500,
      description: 'Comma-separated event types (see `EventType`); `reset` is always sent.',
    }),
  ),
});
export const EventHistoryQuery = Type.Object({
  ...EventsQuery.properties,
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 10_000,
      default: 1000,
      description: 'The newest events, at most this many (returned oldest first).',
    }),
  ),
});
