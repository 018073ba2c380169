/** What the text kinds (ntfy, Discord, Telegram, e-mail) show: one rendering per notification. */

import type { NotificationPayload } from '../events.js';

/** ntfy priority (1–5) and Discord embed colour by how much the event asks for attention. */
export function urgency(payload: NotificationPayload): 'high' | 'default' | 'low' {
  if (
    payload.type === 'job.failed' ||
    payload.type === 'machine.failed' ||
    payload.type === 'machine.offline'
  ) {
    return 'high';
  }
  if (payload.type === 'job.started' || payload.type === 'machine.online' || payload.type === 'test')
    return 'low';
  return 'default';
}

/** ntfy tags (emoji short codes ntfy shows before the title) and a tag naming the event. */
export function tagsOf(payload: NotificationPayload): string[] {
  const emoji: Record<string, string> = {
    'job.completed': 'white_check_mark',
    'job.failed': 'x',
    'job.cancelled': 'no_entry_sign',
    'job.paused': 'pause_button',
    'job.started': 'arrow_forward',
    'machine.failed': 'rotating_light',
    'machine.offline': 'electric_plug',
    'machine.online': 'electric_plug',
    'machine.awaiting_clear': 'broom',
    'queue.waiting': 'hourglass',
    'queue.unroutable': 'warning',
    test: 'bell',
    digest: 'scroll',
  };
  return [emoji[payload.type] ?? 'bell', payload.type];
}

/** The message body as plain text: the message, then the job's facts, one per line. */
export function plainText(payload: NotificationPayload): string {
  const { data } = payload;
  const lines = [data.message];
  if (data.events) for (const event of data.events) lines.push(`- ${event.timestamp} ${event.title}`);
  const job = data.job;
  if (job) {
    lines.push('');
    lines.push(`Job: ${job.name} (${job.id})`);
    lines.push(`File: ${job.file_name}`);
    if (job.machine_id) lines.push(`Machine: ${job.machine_id}`);
    if (job.progress !== null) lines.push(`Progress: ${Math.round(job.progress)} %`);
    if (job.material?.filament_used_g != null)
      lines.push(`Filament: ${job.material.filament_used_g.toFixed(1)} g`);
  }
  return lines.join('\n');
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text made safe for HTML (e-mail bodies, Telegram's HTML mode): job names are user input. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/** The HTML e-mail body: the same content as `plainText`, escaped, plus the photo inline when present. */
export function html(payload: NotificationPayload, photoCid: string | null): string {
  const paragraphs = plainText(payload)
    .split('\n\n')
    .map((block) => `<p>${escapeHtml(block).replace(/\n/g, '<br>')}</p>`)
    .join('');
  const photo = photoCid
    ? `<p><img src="cid:${photoCid}" alt="photo of the finished job" style="max-width:100%"></p>`
    : '';
  return `<!doctype html><html><body><h2>${escapeHtml(payload.data.title)}</h2>${paragraphs}${photo}</body></html>`;
}
