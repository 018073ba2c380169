/**
 * `ntfy`: publishes to the topic URL as ntfy documents it (docs.ntfy.sh/publish): the message as the
 * body with `Title`, `Priority`, `Tags` and `Click` headers, or, with a photo, the photo as the body
 * (`PUT`, `Filename`) and the message in the `Message` header. `token` is sent as `Authorization: Bearer`.
 * Header values outside ASCII are RFC 2047-encoded, which ntfy decodes.
 */

import type { NotificationPayload } from '../events.js';
import { attempt, httpRequest } from './http.js';
import type { Outgoing, TargetSender } from './kind.js';
import { plainText, tagsOf, urgency } from './message.js';

const PRIORITY = { high: '4', default: '3', low: '2' } as const;

/** A header value: ASCII as it is (line breaks folded), anything else as an RFC 2047 encoded word. */
export function headerValue(text: string): string {
  const flat = text.replace(/[\r\n]+/g, ' ');
  return /^[\x20-\x7e]*$/.test(flat) ? flat : `=?UTF-8?B?${Buffer.from(flat, 'utf8').toString('base64')}?=`;
}

function headersFor(payload: NotificationPayload, token: string | undefined): Record<string, string> {
  return {
    'user-agent': 'machine-api',
    title: headerValue(payload.data.title),
    priority: PRIORITY[urgency(payload)],
    tags: tagsOf(payload).join(','),
    ...(payload.data.link ? { click: payload.data.link } : {}),
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  };
}

export const ntfySender: TargetSender = {
  send({ settings, payload, photo, signal }: Outgoing) {
    const headers = headersFor(payload, settings.token);
    const url = settings.url ?? '';
    if (photo) {
      return attempt(() =>
        httpRequest({
          method: 'PUT',
          url,
          headers: { ...headers, filename: 'photo.jpg', message: headerValue(plainText(payload)) },
          body: photo,
          signal,
        }),
      );
    }
    return attempt(() =>
      httpRequest({
        method: 'POST',
        url,
        headers: { ...headers, 'content-type': 'text/plain; charset=utf-8' },
        body: plainText(payload),
        signal,
      }),
    );
  },
};
