/**
 * `telegram`: the Bot API (core.telegram.org/bots/api): `sendMessage` with the text in HTML mode, or
 * `sendPhoto` with the photo as a multipart upload and the text as its caption. The API path holds the
 * bot token, so neither the URL nor anything derived from it is ever logged. A 429 carries
 * `parameters.retry_after`, which is honoured like `Retry-After`.
 */

import { FormData } from 'undici';
import type { AttemptResult } from '../rules.js';
import { attempt, type HttpAnswer, httpRequest, judged } from './http.js';
import type { Outgoing, TargetSender } from './kind.js';
import { escapeHtml, plainText } from './message.js';

const DEFAULT_API = 'https://api.telegram.org';

/** Telegram's limits: a message 4096 characters, a caption 1024. */
const clip = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

function judge(answer: HttpAnswer): AttemptResult {
  const result = judged(answer);
  if (result.ok) return result;
  let body: { description?: unknown; parameters?: { retry_after?: unknown } } = {};
  try {
    body = JSON.parse(answer.text) as typeof body;
  } catch {
    // Not the Bot API's JSON: judged by its status alone.
  }
  const retryAfter = body.parameters?.retry_after;
  return {
    ...result,
    ...(typeof body.description === 'string'
      ? { error: `Telegram answered ${answer.status}: ${body.description}` }
      : {}),
    ...(typeof retryAfter === 'number' && result.retryAfterSeconds === undefined
      ? { retryAfterSeconds: retryAfter }
      : {}),
  };
}

export const telegramSender: TargetSender = {
  send({ settings, payload, photo, signal }: Outgoing) {
    const base = (settings.url ?? DEFAULT_API).replace(/\/+$/, '');
    const method = photo ? 'sendPhoto' : 'sendMessage';
    const url = `${base}/bot${settings.bot_token ?? ''}/${method}`;
    // Clipped before escaping, so that no entity is cut in half.
    const text = (max: number) =>
      `<b>${escapeHtml(clip(payload.data.title, 200))}</b>\n${escapeHtml(clip(plainText(payload), max - 400))}`;
    if (photo) {
      const form = new FormData();
      form.append('chat_id', settings.chat_id ?? '');
      form.append('caption', text(1024));
      form.append('parse_mode', 'HTML');
      form.append('photo', new Blob([new Uint8Array(photo)], { type: 'image/jpeg' }), 'photo.jpg');
      return attempt(() => httpRequest({ method: 'POST', url, headers: {}, body: form, signal }), judge);
    }
    const body = JSON.stringify({
      chat_id: settings.chat_id,
      text: text(4096),
      parse_mode: 'HTML',
      link_preview_options: { is_disabled: true },
    });
    return attempt(
      () =>
        httpRequest({ method: 'POST', url, headers: { 'content-type': 'application/json' }, body, signal }),
      judge,
    );
  },
};
