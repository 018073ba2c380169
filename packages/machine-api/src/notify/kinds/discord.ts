/**
 * `discord`: an execute-webhook call as Discord documents it (POST to the webhook URL with `wait=true`):
 * one embed with the title, the message, a colour by urgency and the time; with a photo, a
 * `multipart/form-data` body whose `payload_json` refers to the `files[0]` part as
 * `attachment://photo.jpg`. The URL holds the webhook's token: it is the target's secret.
 */

import { FormData } from 'undici';
import { attempt, httpRequest } from './http.js';
import type { Outgoing, TargetSender } from './kind.js';
import { plainText, urgency } from './message.js';

const COLOUR = { high: 0xd83c3e, default: 0x2d7d9a, low: 0x57a55a } as const;

/** Discord's limits: embed title 256, description 4096 characters. */
const clip = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

export const discordSender: TargetSender = {
  send({ settings, payload, photo, signal }: Outgoing) {
    const url = new URL(settings.url ?? '');
    url.searchParams.set('wait', 'true');
    const embed = {
      title: clip(payload.data.title, 256),
      description: clip(plainText(payload), 4096),
      color: COLOUR[urgency(payload)],
      timestamp: payload.timestamp,
      footer: { text: `machine-api · ${payload.type}` },
      ...(photo ? { image: { url: 'attachment://photo.jpg' } } : {}),
    };
    const json = { username: 'machine-api', embeds: [embed], allowed_mentions: { parse: [] } };
    if (photo) {
      const form = new FormData();
      form.append(
        'payload_json',
        JSON.stringify({ ...json, attachments: [{ id: 0, filename: 'photo.jpg' }] }),
      );
      form.append('files[0]', new Blob([new Uint8Array(photo)], { type: 'image/jpeg' }), 'photo.jpg');
      return attempt(() =>
        httpRequest({
          method: 'POST',
          url: url.href,
          headers: { 'user-agent': 'machine-api' },
          body: form,
          signal,
        }),
      );
    }
    return attempt(() =>
      httpRequest({
        method: 'POST',
        url: url.href,
        headers: { 'content-type': 'application/json', 'user-agent': 'machine-api' },
        body: JSON.stringify(json),
        signal,
      }),
    );
  },
};
