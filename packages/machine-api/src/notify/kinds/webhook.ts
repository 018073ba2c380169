/**
 * `webhook`: the notification as JSON, signed as the Standard Webhooks specification says, by its
 * reference library: `webhook-id` (the delivery id, the same on every attempt, so a receiver drops
 * repeats), `webhook-timestamp` (this attempt's, so a receiver refuses replays) and
 * `webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>`.
 */

import { Webhook } from 'standardwebhooks';
import { attempt, httpRequest } from './http.js';
import type { Outgoing, TargetSender } from './kind.js';

export const webhookSender: TargetSender = {
  send(outgoing: Outgoing) {
    const { settings, id, payload, signal } = outgoing;
    const body = JSON.stringify(payload);
    const at = new Date();
    const signature = new Webhook(settings.secret ?? '').sign(id, at, body);
    return attempt(() =>
      httpRequest({
        method: 'POST',
        url: settings.url ?? '',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'machine-api',
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': signature,
        },
        body,
        signal,
      }),
    );
  },
};
