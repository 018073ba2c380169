/**
 * One Server-Sent Events stream (`text/event-stream`): a subscription to the bus written to a response.
 *
 * Each event is `id: <id>` plus one `data:` line of JSON (no `event:` field, so `EventSource.onmessage`
 * sees every type; the JSON carries `type`). A comment line every `heartbeatMs` keeps proxies from
 * closing an idle stream. A client that reads too slowly is disconnected once `maxBufferedBytes` pile
 * up instead of growing the buffer without bound; it reconnects with `Last-Event-ID` and loses nothing
 * that is still in the history.
 */

import type { ServerResponse } from 'node:http';
import type { EventBus, EventFilter, FarmEvent } from './events.js';

export interface StreamOptions {
  filter: EventFilter;
  /** The client's `Last-Event-ID`, when it resumes. */
  after: number | null;
  heartbeatMs: number;
  maxBufferedBytes: number;
  /** Sent as the stream's first line: how long `EventSource` waits before reconnecting. */
  retryMs: number;
}

/** Frames one event; JSON never contains a raw newline, so one `data:` line suffices. */
export function frame(event: FarmEvent): string {
  return `id: ${event.id}\ndata: ${JSON.stringify(event)}\n\n`;
}

/** Streams `bus` events to `response` (headers already sent) until either side ends. */
export class EventStream {
  private closed = false;
  private heartbeat: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly response: ServerResponse,
    bus: EventBus,
    options: StreamOptions,
  ) {
    response.write(`retry: ${options.retryMs}\n\n`);
    const subscription = bus.subscribe(options.filter, options.after, (event) => this.send(event, options));
    this.unsubscribe = () => subscription.close();
    this.heartbeat = setInterval(() => this.write(': heartbeat\n\n', options), options.heartbeatMs);
    response.on('close', () => this.close());
  }

  /** Ends the stream (service shutdown, slow client); idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.unsubscribe?.();
    if (!this.response.writableEnded) this.response.end();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private send(event: FarmEvent, options: StreamOptions): void {
    this.write(frame(event), options);
  }

  private write(text: string, options: StreamOptions): void {
    if (this.closed) return;
    if (this.response.writableLength > options.maxBufferedBytes) {
      this.response.destroy();
      this.close();
      return;
    }
    this.response.write(text);
  }
}
