/**
 * The page's one connection to `GET /events` (Server-Sent Events). The `eventsource` library speaks the
 * protocol (framing, `retry:`, reconnecting with `Last-Event-ID`) and, unlike the browser's EventSource,
 * can send the session's API key as a header. When the service refuses the stream (a restart, a 5xx), a
 * new connection resumes from the last id seen, so no event is lost while the history still holds it;
 * a `reset` event (the id is too old) reloads the whole state instead.
 */

import { signal } from '@preact/signals';
import { EventSource } from 'eventsource';
import { apiKey, keyRefused } from '../session';
import { applyEvent, type FarmEvent } from './apply';
import { loadFarm } from './farm';

/** `live` while the stream is open; the header shows anything else. */
export const connection = signal<'connecting' | 'live' | 'reconnecting'>('connecting');

/** A refused stream is tried again after 2 s, doubling up to 30 s while the service keeps refusing. */
const FIRST_RESTART_MS = 2000;
const LAST_RESTART_MS = 30_000;
let restartDelay = FIRST_RESTART_MS;

let lastId: string | null = null;
let source: EventSource | null = null;
let restartTimer: ReturnType<typeof setTimeout> | undefined;

function open(): void {
  const stream = new EventSource('/events', {
    fetch: (url, init) =>
      fetch(url, {
        ...init,
        headers: {
          ...init?.headers,
          // A fresh connection after a refusal resumes where the last one stopped.
          ...(lastId && !init?.headers?.['Last-Event-ID'] ? { 'Last-Event-ID': lastId } : {}),
          ...(apiKey.value ? { 'x-api-key': apiKey.value } : {}),
        },
      }),
  });
  source = stream;
  stream.onopen = () => {
    connection.value = 'live';
    restartDelay = FIRST_RESTART_MS;
    // The state is read (again) once the stream is open, so nothing that happened before it is missed.
    if (lastId === null) load();
  };
  stream.onmessage = (message) => {
    lastId = message.lastEventId || lastId;
    let event: FarmEvent;
    try {
      event = JSON.parse(message.data) as FarmEvent;
    } catch {
      return;
    }
    if (event.type === 'reset') load();
    else applyEvent(event);
  };
  stream.onerror = (error) => {
    connection.value = 'reconnecting';
    if (stream.readyState !== stream.CLOSED || source !== stream) return;
    // The library gives up on a non-200 answer; 401 waits for a key (restartEvents), the rest is retried.
    if (error.code === 401) {
      keyRefused();
      return;
    }
    restartTimer = setTimeout(open, restartDelay);
    restartDelay = Math.min(LAST_RESTART_MS, restartDelay * 2);
  };
}

function load(): void {
  void loadFarm();
}

/** Connects (or connects again, e.g. with a new key), resuming after the last event seen. */
export function restartEvents(): void {
  clearTimeout(restartTimer);
  source?.close();
  source = null;
  connection.value = 'connecting';
  open();
  // The first picture does not wait for the stream: cards show as soon as the state is read.
  load();
}

/** Opens the stream; returns a function that closes it. */
export function connectEvents(): () => void {
  restartEvents();
  return () => {
    clearTimeout(restartTimer);
    source?.close();
    source = null;
  };
}
