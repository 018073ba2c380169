/**
 * `email`: SMTP through nodemailer, with STARTTLS required (the default), implicit TLS, or none (a local
 * relay). Plain text and HTML; the photo attached and shown inline. The Message-ID is the delivery id, so
 * a resend after a crash is recognisably the same message. Reply codes: 4xx and connection failures are
 * retried, 5xx are not.
 */

import { readFileSync } from 'node:fs';
import nodemailer from 'nodemailer';
import type { AttemptResult } from '../rules.js';
import type { Outgoing, TargetSender } from './kind.js';
import { html, plainText } from './message.js';

const PHOTO_CID = 'photo@machine-api';

/** The reply code at the start of an SMTP reply line (`250 2.0.0 OK`). */
function replyCode(line: string | undefined): number | null {
  const match = /^([2-5]\d\d)\b/.exec(line ?? '');
  return match ? Number(match[1]) : null;
}

export const emailSender: TargetSender = {
  async send({ settings, payload, photo, id, timeoutMs }: Outgoing): Promise<AttemptResult> {
    const tls = settings.tls ?? 'starttls';
    const transport = nodemailer.createTransport({
      host: settings.host,
      port: settings.port ?? (tls === 'implicit' ? 465 : 587),
      secure: tls === 'implicit',
      requireTLS: tls === 'starttls',
      ignoreTLS: tls === 'none',
      ...(settings.username ? { auth: { user: settings.username, pass: settings.password ?? '' } } : {}),
      ...(settings.ca_file ? { tls: { ca: readFileSync(settings.ca_file) } } : {}),
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
      // nodemailer's own logger stays off: it would write the conversation, AUTH included.
      logger: false,
      debug: false,
    });
    try {
      const deadline = new Promise<never>((_, reject) => {
        const timer = setTimeout(
          () => reject(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })),
          timeoutMs,
        );
        timer.unref();
      });
      const info = (await Promise.race([
        transport.sendMail({
          from: settings.from,
          to: settings.to,
          subject: payload.data.title,
          messageId: `<${id}@machine-api>`,
          text: plainText(payload),
          html: html(payload, photo ? PHOTO_CID : null),
          headers: { 'X-Machine-Api-Event': payload.type },
          ...(photo ? { attachments: [{ filename: 'photo.jpg', content: photo, cid: PHOTO_CID }] } : {}),
        }),
        deadline,
      ])) as { response?: string };
      return {
        ok: true,
        status: replyCode(info.response),
        response: (info.response ?? '').slice(0, 300) || null,
      };
    } catch (error) {
      const failure = error as { code?: string; responseCode?: number; response?: string; command?: string };
      const status = failure.responseCode ?? replyCode(failure.response);
      const response = failure.response ? failure.response.slice(0, 300) : null;
      // Never the library's message: it can quote the AUTH exchange.
      const reason =
        status !== null
          ? `the mail server answered ${status}${failure.command ? ` to ${failure.command.split(' ')[0]}` : ''}`
          : failure.code === 'ETIMEDOUT'
            ? 'no answer within the timeout'
            : `could not talk to the mail server (${failure.code ?? 'error'})`;
      return { ok: false, retry: status === null || status < 500, status, response, error: reason };
    } finally {
      transport.close();
    }
  },
};
