/**
 * Pictures from the service's camera routes. An `<img src>` cannot send the session's API key, so pictures
 * are fetched with it and shown from object URLs: a snapshot refreshed on an interval (machine cards, the
 * camera wall, a job's photo), or the MJPEG stream read part by part (the machine page). The service sends
 * every part with a `Content-Length`, which is all the reading below relies on.
 */

import { useEffect, useState } from 'preact/hooks';
import type { Schemas } from '../api/client';
import { apiKey, keyRefused } from '../session';

type CameraInfo = Schemas['CameraInfo'];

function headers(): Record<string, string> {
  return apiKey.value ? { 'x-api-key': apiKey.value } : {};
}

/** CSS that shows a frame the right way up (Moonraker's flip and rotation settings). */
function orientation(camera: CameraInfo | null | undefined): Record<string, string> {
  if (!camera) return {};
  const parts = [
    camera.rotation ? `rotate(${camera.rotation}deg)` : '',
    camera.flip_horizontal ? 'scaleX(-1)' : '',
    camera.flip_vertical ? 'scaleY(-1)' : '',
  ].filter(Boolean);
  return parts.length ? { transform: parts.join(' ') } : {};
}

/** An object URL for the latest picture, replacing (and releasing) the previous one. */
function usePicture(): [string | null, (blob: Blob | null) => void] {
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => () => void (url && URL.revokeObjectURL(url)), [url]);
  return [url, (blob) => setUrl(blob ? URL.createObjectURL(blob) : null)];
}

/**
 * A JPEG from `path`, fetched again every `refreshMs`; with `untilShown`, only until there is one (a job's
 * photo is taken a moment after the job ends). `quiet` shows nothing instead of why there is no picture.
 */
export function Snapshot(props: {
  path: string;
  alt: string;
  refreshMs: number;
  camera?: CameraInfo | null;
  class?: string;
  untilShown?: boolean;
  quiet?: boolean;
}) {
  const [url, show] = usePicture();
  const [failed, setFailed] = useState<string | null>(null);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      try {
        const response = await fetch(props.path, { headers: headers(), cache: 'no-store' });
        if (response.status === 401) keyRefused();
        if (stopped) return;
        if (response.ok) {
          show(await response.blob());
          setFailed(null);
          if (props.untilShown) return;
        } else {
          const body = (await response.json().catch(() => null)) as { message?: string } | null;
          setFailed(body?.message ?? `HTTP ${response.status}`);
        }
      } catch {
        if (!stopped) setFailed('the service could not be reached');
      }
      if (!stopped && props.refreshMs > 0) timer = setTimeout(load, props.refreshMs);
    };
    void load();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [props.path, props.refreshMs]);
  if (!url) {
    return failed && !props.quiet ? (
      <p class={`camera-missing ${props.class ?? ''}`} role="status">
        No picture: {failed}
      </p>
    ) : null;
  }
  return (
    <img
      class={`camera ${props.class ?? ''}`}
      src={url}
      alt={props.alt}
      style={orientation(props.camera)}
      data-camera-ready="true"
    />
  );
}

/** Splits the service's MJPEG parts (each with `Content-Length`) out of a growing byte buffer. */
type Bytes = Uint8Array<ArrayBuffer>;

function takeParts(buffer: Bytes): { parts: Bytes[]; rest: Bytes } {
  const parts: Bytes[] = [];
  let at = 0;
  const text = new TextDecoder('latin1');
  for (;;) {
    let headerEnd = -1;
    for (let i = at; i + 3 < buffer.length; i++) {
      if (buffer[i] === 13 && buffer[i + 1] === 10 && buffer[i + 2] === 13 && buffer[i + 3] === 10) {
        headerEnd = i;
        break;
      }
    }
    if (headerEnd === -1) break;
    const length = Number(/content-length:\s*(\d+)/i.exec(text.decode(buffer.subarray(at, headerEnd)))?.[1]);
    const start = headerEnd + 4;
    if (!Number.isFinite(length) || start + length > buffer.length) break;
    parts.push(buffer.slice(start, start + length));
    at = start + length;
  }
  return { parts, rest: buffer.slice(at) };
}

/** The machine's live stream; after the stream ends (the camera failed), it tries again every 5 s. */
export function LiveStream(props: { machineId: string; camera: CameraInfo | null | undefined; alt: string }) {
  const [url, show] = usePicture();
  const [note, setNote] = useState<string | null>('Connecting to the camera…');
  useEffect(() => {
    const controller = new AbortController();
    let retry: ReturnType<typeof setTimeout> | undefined;
    const open = async () => {
      try {
        const response = await fetch(`/machines/${encodeURIComponent(props.machineId)}/stream`, {
          headers: headers(),
          signal: controller.signal,
        });
        if (response.status === 401) keyRefused();
        if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
        const reader = response.body.getReader();
        let buffer: Bytes = new Uint8Array(0);
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          const joined = new Uint8Array(buffer.length + value.length);
          joined.set(buffer);
          joined.set(value, buffer.length);
          const { parts, rest } = takeParts(joined);
          buffer = rest;
          const last = parts.at(-1);
          if (last) {
            show(new Blob([last], { type: 'image/jpeg' }));
            setNote(null);
          }
        }
        setNote('The camera stopped sending pictures; trying again…');
      } catch {
        if (controller.signal.aborted) return;
        setNote('The camera stream is not available; trying again…');
      }
      if (!controller.signal.aborted) retry = setTimeout(open, 5000);
    };
    void open();
    return () => {
      controller.abort();
      clearTimeout(retry);
    };
  }, [props.machineId]);
  return (
    <figure class="live">
      {url && (
        <img
          class="camera"
          src={url}
          alt={props.alt}
          style={orientation(props.camera)}
          data-camera-ready="true"
        />
      )}
      {note && (
        <p class="live-note" role="status">
          {note}
        </p>
      )}
    </figure>
  );
}
