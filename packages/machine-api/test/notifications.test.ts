/**
 * Notifications over HTTP, end to end: targets from the configuration file and from the API, each kind
 * delivering to a local receiver that speaks its service's documented API (a Standard Webhooks receiver
 * verifying signatures with the `standardwebhooks` package, ntfy, Discord, the Telegram Bot API, a real
 * SMTP server with STARTTLS and AUTH), farm events from real (simulated) prints, filters, quiet hours, the
 * burst digest, a target that is down, one that hangs, secrets never shown nor logged, hostile input.
 */

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningService, startService } from '../src/service.js';
import { jpegFrame } from './camera-frames.js';
import { postPrint, waitFor } from './harness.js';
import { formData, HttpReceiver, SmtpReceiver } from './notify-receivers.js';
import { testDatabaseUrl } from './test-database.js';

const WEBHOOK_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NTFY_TOKEN = 'tk_ntfysecret0123456789';
const DISCORD_PATH = '/api/webhooks/1234567890/discordTokenSecretPart';
const BOT_TOKEN = '123456:telegramBotSecretToken';
const SMTP_PASSWORD = 'smtp-password-secret';
const SECRETS = [WEBHOOK_SECRET, NTFY_TOKEN, 'discordTokenSecretPart', BOT_TOKEN, SMTP_PASSWORD];
const GCODE = 'G28\nG1 X10 Y10 Z0.2 F3000\n';
/** What the camera of `sim` shows: the finish photo of its jobs. */
const PHOTO = jpegFrame(7);

interface Delivery {
  id: string;
  target_id: string;
  target_name: string;
  event: string;
  status: string;
  attempts: number;
  response_status: number | null;
  response: string | null;
  error: string | null;
  digest_id: string | null;
}
interface TargetView {
  id: string;
  name: string;
  kind: string;
  source: string;
  secret_set: boolean;
  url?: string;
  [key: string]: unknown;
}

let http: HttpReceiver;
let smtp: SmtpReceiver;
let dir: string;
let service: RunningService;
let base: string;
const logLines: string[] = [];

function config(): string {
  return `
[server]
awaiting_clear_minutes = 0.005
queue_wait_minutes = 1000

[machines.sim]
type = "Noop"
print_seconds = 0.3
tags = ["basement"]
camera = { snapshot_url = "${http.url}/snap.jpg" }

[machines.other]
type = "Noop"
print_seconds = 60

[[notify]]
name = "hook"
kind = "webhook"
url = "${http.url}/hook"
secret = "${WEBHOOK_SECRET}"

[[notify]]
name = "phone"
kind = "ntfy"
url = "${http.url}/ntfy/printers"
token = "${NTFY_TOKEN}"
events = ["job.completed", "job.failed", "job.cancelled", "test"]
machines = ["basement"]

[[notify]]
name = "chat"
kind = "discord"
url = "${http.url}${DISCORD_PATH}"
events = ["job.completed", "test"]

[[notify]]
name = "bot"
kind = "telegram"
bot_token = "${BOT_TOKEN}"
chat_id = "-10042"
url = "${http.url}/telegram"
events = ["job.completed", "job.cancelled", "job.paused", "test"]

[[notify]]
name = "mail"
kind = "email"
host = "localhost"
port = ${smtp.port}
username = "printer"
password = "${SMTP_PASSWORD}"
from = "farm@example.com"
to = ["ops@example.com"]
ca_file = "smtp-ca.pem"
events = ["job.completed", "test"]
`;
}

async function api<T = unknown>(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const response = await fetch(`${base}${path}`, {
    method,
    ...(body !== undefined
      ? {
          headers: { 'content-type': 'application/json' },
          body: typeof body === 'string' ? body : JSON.stringify(body),
        }
      : {}),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
}

async function targetNamed(name: string): Promise<TargetView> {
  const { body } = await api<TargetView[]>('GET', '/notifications/targets');
  const found = body.find((target) => target.name === name);
  if (!found) throw new Error(`no target ${name}`);
  return found;
}

async function delivered(id: string): Promise<Delivery> {
  return waitFor(
    async () => {
      const { body } = await api<Delivery[]>('GET', '/notifications/deliveries?limit=1000');
      const found = body.find((delivery) => delivery.id === id);
      return found?.status === 'delivered' ? found : undefined;
    },
    { what: `delivery ${id}`, timeoutMs: 20_000 },
  );
}

/** Webhook payloads received at `path`, verified as a Standard Webhooks receiver does. */
function webhookPayloads(path: string): { type: string; data: Record<string, unknown> }[] {
  const receiver = new Webhook(WEBHOOK_SECRET);
  return http.to(path).map(
    (request) =>
      receiver.verify(request.body.toString('utf8'), request.headers as Record<string, string>) as {
        type: string;
        data: Record<string, unknown>;
      },
  );
}

beforeAll(async () => {
  http = await HttpReceiver.start();
  const answerJson = http.answer;
  http.answer = (request) =>
    request.url === '/snap.jpg'
      ? { status: 200, headers: { 'content-type': 'image/jpeg' }, body: PHOTO }
      : answerJson(request);
  smtp = await SmtpReceiver.start({ user: 'printer', pass: SMTP_PASSWORD });
  dir = await mkdtemp(join(tmpdir(), 'machine-api-notify-'));
  await writeFile(join(dir, 'smtp-ca.pem'), smtp.cert);
  const configPath = join(dir, 'machine-api.toml');
  await writeFile(configPath, config());
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      logLines.push(String(chunk));
      callback();
    },
  });
  service = await startService({
    configPath,
    dataDir: join(dir, 'data'),
    databaseUrl: await testDatabaseUrl(dir),
    host: '127.0.0.1',
    port: 0,
    logger: pino({ level: 'debug' }, sink),
    mdnsDefault: false,
  });
  await service.machinesStarted;
  base = service.url;
});

afterAll(async () => {
  await service?.close();
  await http?.close();
  await smtp?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('notification targets', () => {
  it('lists the configuration file\'s targets without their secrets ("secret_set": true)', async () => {
    const response = await fetch(`${base}/notifications/targets`);
    expect(response.status).toBe(200);
    const text = await response.text();
    for (const secret of SECRETS) expect(text).not.toContain(secret);
    const targets = JSON.parse(text) as TargetView[];
    expect(targets.map((t) => [t.name, t.kind, t.source, t.secret_set])).toEqual([
      ['bot', 'telegram', 'config', true],
      ['chat', 'discord', 'config', true],
      ['hook', 'webhook', 'config', true],
      ['mail', 'email', 'config', true],
      ['phone', 'ntfy', 'config', true],
    ]);
    const chat = targets.find((t) => t.name === 'chat');
    expect(chat?.url).toBeUndefined();
    const phone = targets.find((t) => t.name === 'phone');
    expect(phone).toMatchObject({
      url: `${http.url}/ntfy/printers`,
      events: ['job.completed', 'job.failed', 'job.cancelled', 'test'],
      machines: ['basement'],
      quiet_hours: null,
      burst: null,
      enabled: true,
      timeout_seconds: 10,
      max_attempts: 10,
      retry_seconds: 10,
    });
  });

  it('a target from the configuration file is read-only over the API (409)', async () => {
    const hook = await targetNamed('hook');
    const patch = await api<{ error_code: string; message: string }>(
      'PATCH',
      `/notifications/targets/${hook.id}`,
      {
        enabled: false,
      },
    );
    expect(patch.status).toBe(409);
    expect(patch.body).toMatchObject({
      error_code: 'Conflict',
      message: expect.stringContaining('configuration file'),
    });
    expect((await api('DELETE', `/notifications/targets/${hook.id}`)).status).toBe(409);
    expect((await targetNamed('hook')).enabled).toBe(true);
  });
});

describe('the test message reaches every kind with the documented content', () => {
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    for (const name of ['hook', 'phone', 'chat', 'bot', 'mail']) {
      const target = await targetNamed(name);
      const response = await api<Delivery>('POST', `/notifications/targets/${target.id}/test`);
      expect(response.status).toBe(202);
      expect(response.body).toMatchObject({
        target_id: target.id,
        target_name: name,
        event: 'test',
        status: 'pending',
      });
      ids[name] = response.body.id;
    }
    for (const id of Object.values(ids)) await delivered(id);
  });

  it('webhook: POST with a Standard Webhooks signature over id.timestamp.body; webhook-id is the delivery id', async () => {
    const request = http.to('/hook').find((r) => r.headers['webhook-id'] === ids.hook);
    expect(request?.method).toBe('POST');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const payload = new Webhook(WEBHOOK_SECRET).verify(
      request?.body.toString('utf8') ?? '',
      request?.headers as Record<string, string>,
    );
    expect(payload).toEqual({
      type: 'test',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      data: {
        title: 'Test notification',
        message: 'This is a test of the notification target "hook" of machine-api.',
        machine: null,
        job: null,
      },
    });
    // A receiver refuses the same body under another secret.
    expect(() =>
      new Webhook('whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA').verify(
        request?.body.toString('utf8') ?? '',
        request?.headers as Record<string, string>,
      ),
    ).toThrow();
  });

  it('ntfy: POST to the topic with Title, Priority, Tags and the access token', () => {
    const request = http.to('/ntfy/printers').at(-1);
    expect(request?.method).toBe('POST');
    expect(request?.headers.title).toBe('Test notification');
    expect(request?.headers.priority).toBe('2');
    expect(request?.headers.tags).toBe('bell,test');
    expect(request?.headers.authorization).toBe(`Bearer ${NTFY_TOKEN}`);
    expect(request?.body.toString('utf8')).toBe(
      'This is a test of the notification target "phone" of machine-api.',
    );
  });

  it('discord: execute-webhook with wait=true and one embed', () => {
    const request = http.to(DISCORD_PATH).at(-1);
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe(`${DISCORD_PATH}?wait=true`);
    const body = JSON.parse(request?.body.toString('utf8') ?? '{}');
    expect(body).toMatchObject({
      username: 'machine-api',
      allowed_mentions: { parse: [] },
      embeds: [
        {
          title: 'Test notification',
          description: 'This is a test of the notification target "chat" of machine-api.',
          footer: { text: 'machine-api · test' },
        },
      ],
    });
  });

  it('telegram: sendMessage to the chat, HTML parse mode, the token only in the API path', () => {
    const request = http.to('/telegram/').at(-1);
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe(`/telegram/bot${BOT_TOKEN}/sendMessage`);
    expect(JSON.parse(request?.body.toString('utf8') ?? '{}')).toEqual({
      chat_id: '-10042',
      text: '<b>Test notification</b>\nThis is a test of the notification target &quot;bot&quot; of machine-api.',
      parse_mode: 'HTML',
      link_preview_options: { is_disabled: true },
    });
  });

  it('e-mail: over STARTTLS with AUTH, plain text and HTML, the delivery id as Message-ID', () => {
    const mail = smtp.mails.at(-1);
    expect(mail).toMatchObject({
      from: 'farm@example.com',
      to: ['ops@example.com'],
      user: 'printer',
      secure: true,
    });
    expect(mail?.raw).toContain('Subject: Test notification');
    expect(mail?.raw).toContain(`Message-ID: <${ids.mail}@machine-api>`);
    expect(mail?.raw).toContain('Content-Type: text/plain');
    expect(mail?.raw).toContain('Content-Type: text/html');
    expect(mail?.raw).toContain('X-Machine-Api-Event: test');
  });

  it('the delivery log records each attempt: delivered, one attempt, the HTTP status or the SMTP reply', async () => {
    const { status, body } = await api<Delivery[]>('GET', '/notifications/deliveries?status=delivered');
    expect(status).toBe(200);
    const byName = Object.fromEntries(body.filter((d) => d.event === 'test').map((d) => [d.target_name, d]));
    for (const name of ['hook', 'phone', 'chat', 'bot']) {
      expect(byName[name]).toMatchObject({
        status: 'delivered',
        attempts: 1,
        response_status: 200,
        error: null,
      });
    }
    expect(byName.mail).toMatchObject({
      status: 'delivered',
      attempts: 1,
      response_status: 250,
      error: null,
    });
    const hook = await targetNamed('hook');
    const filtered = await api<Delivery[]>('GET', `/notifications/deliveries?target=${hook.id}`);
    expect(filtered.body.every((d) => d.target_id === hook.id)).toBe(true);
  });
});

describe('farm events', () => {
  it('a print on a tagged machine: job.started and job.completed, then machine.awaiting_clear; filters hold', async () => {
    const hookBefore = http.to('/hook').length;
    const phoneBefore = http.to('/ntfy/').length;
    const response = await postPrint(base, { machineId: 'sim', jobName: 'benchy', file: GCODE });
    expect(response.status).toBe(200);
    const { job_id: jobId } = (await response.json()) as { job_id: string };
    await waitFor(() => webhookPayloads('/hook').some((p) => p.type === 'machine.awaiting_clear'), {
      what: 'machine.awaiting_clear at the webhook',
    });
    const events = webhookPayloads('/hook')
      .slice(hookBefore)
      .map((p) => p.type);
    expect(events).toEqual(['job.started', 'job.completed', 'machine.awaiting_clear']);
    const completed = webhookPayloads('/hook').find((p) => p.type === 'job.completed');
    expect(completed?.data).toMatchObject({
      title: 'Completed: benchy',
      machine: { id: 'sim' },
      job: { id: jobId, name: 'benchy', file_name: 'design.gcode', status: 'completed', machine_id: 'sim' },
    });
    expect(
      (completed?.data.job as { duration_seconds: number } | undefined)?.duration_seconds,
    ).toBeGreaterThanOrEqual(0);
    // ntfy: only job.completed of its events, and `sim` carries its tag `basement`; the finish photo is
    // the body of a PUT (ntfy's attachment upload), the message in its header.
    await waitFor(() => http.to('/ntfy/').length > phoneBefore);
    const phone = http.to('/ntfy/').slice(phoneBefore);
    expect(phone.map((r) => r.headers.title)).toEqual(['Completed: benchy']);
    expect(phone[0]).toMatchObject({ method: 'PUT', body: PHOTO });
    expect(phone[0]?.headers).toMatchObject({
      tags: 'white_check_mark,job.completed',
      priority: '3',
      filename: 'photo.jpg',
      authorization: `Bearer ${NTFY_TOKEN}`,
    });
    expect(phone[0]?.headers.message).toContain('benchy (design.gcode) completed on sim');
    // Discord: the embed shows the photo attached as files[0].
    const discord = await waitFor(() =>
      http.to(DISCORD_PATH).find((r) => r.body.includes('Completed: benchy')),
    );
    const form = await formData(discord);
    expect(JSON.parse(String(form.get('payload_json')))).toMatchObject({
      embeds: [{ title: 'Completed: benchy', image: { url: 'attachment://photo.jpg' } }],
      attachments: [{ id: 0, filename: 'photo.jpg' }],
    });
    const file = form.get('files[0]') as File;
    expect(file.name).toBe('photo.jpg');
    expect(Buffer.from(await file.arrayBuffer())).toEqual(PHOTO);
    // Telegram: sendPhoto, the photo as a multipart upload, the text as its caption.
    const telegram = await waitFor(() => http.to(`/telegram/bot${BOT_TOKEN}/sendPhoto`).at(0));
    const photoForm = await formData(telegram);
    expect(photoForm.get('chat_id')).toBe('-10042');
    expect(photoForm.get('parse_mode')).toBe('HTML');
    expect(String(photoForm.get('caption'))).toMatch(
      /^<b>Completed: benchy<\/b>\r?\nbenchy \(design\.gcode\) completed on sim/,
    );
    expect(Buffer.from(await (photoForm.get('photo') as File).arrayBuffer())).toEqual(PHOTO);
    // E-mail: the photo attached (inline, referred to by the HTML part).
    const mail = await waitFor(() => smtp.mails.find((m) => m.raw.includes('Subject: Completed: benchy')));
    expect(mail.raw).toContain('Content-Type: image/jpeg; name=photo.jpg');
    expect(mail.raw).toContain('Content-ID: <photo@machine-api>');
    expect(mail.raw).toContain('src=3D"cid:photo@machine-api"');
    expect(mail.raw.replace(/\r?\n/g, '')).toContain(PHOTO.toString('base64').slice(0, 60));
    await fetch(`${base}/machines/sim/clear`, { method: 'POST' });
  });

  it('pausing and cancelling a job on an untagged machine: telegram hears both, ntfy (basement only) neither', async () => {
    const phoneBefore = http.to('/ntfy/').length;
    const response = await postPrint(base, { machineId: 'other', jobName: 'vase', file: GCODE });
    expect(response.status).toBe(200);
    const { job_id: jobId } = (await response.json()) as { job_id: string };
    await waitFor(
      async () =>
        ((await (await fetch(`${base}/jobs/${jobId}`)).json()) as { status: string }).status === 'printing',
    );
    expect((await fetch(`${base}/machines/other/pause`, { method: 'POST' })).status).toBe(200);
    await waitFor(
      () => http.to(`/telegram/bot${BOT_TOKEN}/sendMessage`).some((r) => r.body.includes('Paused: vase')),
      {
        what: 'job.paused at telegram',
      },
    );
    expect((await fetch(`${base}/jobs/${jobId}/cancel`, { method: 'POST' })).status).toBe(200);
    await waitFor(() => http.to('/telegram/').some((r) => r.body.includes('Cancelled: vase')), {
      what: 'job.cancelled at telegram',
    });
    await waitFor(() => webhookPayloads('/hook').some((p) => p.type === 'job.cancelled'));
    expect(http.to('/ntfy/').length).toBe(phoneBefore);
    await fetch(`${base}/machines/other/clear`, { method: 'POST' });
  });
});

describe('targets made over the API', () => {
  it('create, read, change and remove; the secret is kept on PATCH and never shown', async () => {
    const created = await api<TargetView>('POST', '/notifications/targets', {
      name: 'ops-hook',
      kind: 'webhook',
      url: `${http.url}/ops`,
      secret: WEBHOOK_SECRET,
      events: ['job.failed'],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'ops-hook',
      kind: 'webhook',
      source: 'api',
      secret_set: true,
    });
    expect(JSON.stringify(created.body)).not.toContain(WEBHOOK_SECRET);
    const id = created.body.id;
    expect((await api<TargetView>('GET', `/notifications/targets/${id}`)).body).toEqual(created.body);
    const patched = await api<TargetView>('PATCH', `/notifications/targets/${id}`, {
      name: 'ops-hook-2',
      events: null,
      quiet_hours: { start: '22:00', end: '07:00', timezone: 'Europe/Berlin' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      name: 'ops-hook-2',
      events: null,
      quiet_hours: { start: '22:00', end: '07:00', timezone: 'Europe/Berlin' },
      secret_set: true,
    });
    const test = await api<Delivery>('POST', `/notifications/targets/${id}/test`);
    await delivered(test.body.id);
    expect(webhookPayloads('/ops').at(-1)?.type).toBe('test');
    expect((await api('DELETE', `/notifications/targets/${id}`)).status).toBe(204);
    expect((await api('GET', `/notifications/targets/${id}`)).status).toBe(404);
    // The log outlives the target.
    const log = await api<Delivery[]>('GET', `/notifications/deliveries?target=${id}`);
    expect(log.body.map((d) => d.status)).toEqual(['delivered']);
  });

  it('a target that is down for a while gets everything once it is back, in order; 503 and 429 are retried', async () => {
    let refusals = 4;
    const previous = http.answer;
    http.answer = (request) => {
      if (request.url === '/flaky' && refusals > 0) {
        refusals -= 1;
        return refusals % 2 === 0
          ? { status: 429, headers: { 'retry-after': '0' }, body: '{"error":"slow down"}' }
          : { status: 503, body: 'down for maintenance' };
      }
      return previous(request);
    };
    try {
      const target = await api<TargetView>('POST', '/notifications/targets', {
        name: 'flaky',
        kind: 'webhook',
        url: `${http.url}/flaky`,
        secret: WEBHOOK_SECRET,
        retry_seconds: 0.05,
      });
      const sent: string[] = [];
      for (let i = 0; i < 3; i++) {
        sent.push((await api<Delivery>('POST', `/notifications/targets/${target.body.id}/test`)).body.id);
      }
      for (const id of sent) await delivered(id);
      const accepted = http
        .to('/flaky')
        .filter((_, index) => index >= 4)
        .map((r) => r.headers['webhook-id']);
      expect(accepted).toEqual(sent);
      // Every attempt of a delivery carried the same id.
      expect(new Set(http.to('/flaky').map((r) => r.headers['webhook-id']))).toEqual(new Set(sent));
      const log = await api<Delivery[]>('GET', `/notifications/deliveries?target=${target.body.id}`);
      const first = log.body.find((d) => d.id === sent[0]);
      expect(first).toMatchObject({ status: 'delivered', attempts: 5, response_status: 200, error: null });
    } finally {
      http.answer = previous;
    }
  });

  it('a hanging target (accepts, never answers) delays neither another target nor the API', async () => {
    const previous = http.answer;
    http.answer = (request) => (request.url === '/hang' ? 'hang' : previous(request));
    try {
      const hanging = await api<TargetView>('POST', '/notifications/targets', {
        name: 'hanging',
        kind: 'webhook',
        url: `${http.url}/hang`,
        secret: WEBHOOK_SECRET,
        timeout_seconds: 30,
      });
      const stuck = await api<Delivery>('POST', `/notifications/targets/${hanging.body.id}/test`);
      await waitFor(() => http.to('/hang').length === 1, { what: 'the hanging target to be called' });
      const hook = await targetNamed('hook');
      const other = await api<Delivery>('POST', `/notifications/targets/${hook.id}/test`);
      await delivered(other.body.id);
      expect((await fetch(`${base}/ping`)).status).toBe(200);
      const log = await api<Delivery[]>('GET', `/notifications/deliveries?target=${hanging.body.id}`);
      expect(log.body.find((d) => d.id === stuck.body.id)).toMatchObject({ status: 'pending', attempts: 1 });
      expect((await api('DELETE', `/notifications/targets/${hanging.body.id}`)).status).toBe(204);
    } finally {
      http.answer = previous;
    }
  });

  it('quiet hours drop a completed print; a burst limit folds what exceeds it into one digest', async () => {
    const now = new Date();
    const hhmm = (d: Date) =>
      `${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')}`;
    const quiet = await api<TargetView>('POST', '/notifications/targets', {
      name: 'quiet',
      kind: 'webhook',
      url: `${http.url}/quiet`,
      secret: WEBHOOK_SECRET,
      quiet_hours: {
        start: hhmm(new Date(now.getTime() - 3_600_000)),
        end: hhmm(new Date(now.getTime() + 3_600_000)),
        timezone: 'UTC',
      },
    });
    expect(quiet.status).toBe(201);
    const burst = await api<TargetView>('POST', '/notifications/targets', {
      name: 'bursty',
      kind: 'webhook',
      url: `${http.url}/bursty`,
      secret: WEBHOOK_SECRET,
      events: ['job.started', 'job.completed', 'machine.awaiting_clear'],
      burst: { max: 1, minutes: 0.02 },
    });
    expect(burst.status).toBe(201);
    const response = await postPrint(base, { machineId: 'sim', jobName: 'quiet-cube', file: GCODE });
    expect(response.status).toBe(200);
    await waitFor(() => webhookPayloads('/bursty').some((p) => p.type === 'digest'), { what: 'the digest' });
    const payloads = webhookPayloads('/bursty');
    expect(payloads[0]?.type).toBe('job.started');
    const digest = payloads.find((p) => p.type === 'digest');
    expect((digest?.data.events as { type: string }[] | undefined)?.map((e) => e.type)).toContain(
      'job.completed',
    );
    const log = await api<Delivery[]>(
      'GET',
      `/notifications/deliveries?target=${burst.body.id}&status=folded`,
    );
    expect(log.body.length).toBeGreaterThanOrEqual(1);
    expect(log.body.every((d) => typeof d.digest_id === 'string')).toBe(true);
    // By now the webhook without quiet hours has had job.completed; the quiet one nothing.
    await waitFor(() =>
      webhookPayloads('/hook').some(
        (p) => p.type === 'job.completed' && (p.data.job as { name: string }).name === 'quiet-cube',
      ),
    );
    expect(http.to('/quiet')).toEqual([]);
    await fetch(`${base}/machines/sim/clear`, { method: 'POST' });
  });
});

describe('hostile input on the notification routes', () => {
  const cases: [string, unknown][] = [
    ['a string port', { name: 'x', kind: 'email', host: 'h', from: 'a@b.c', to: ['d@e.f'], port: '25' }],
    ['a string for enabled', { name: 'x', kind: 'ntfy', url: 'http://h/t', enabled: 'yes' }],
    ['a number in events', { name: 'x', kind: 'ntfy', url: 'http://h/t', events: [1] }],
    ['an unknown event', { name: 'x', kind: 'ntfy', url: 'http://h/t', events: ['job.exploded'] }],
    ['an unknown kind', { name: 'x', kind: 'pager' }],
    ['an unknown key', { name: 'x', kind: 'ntfy', url: 'http://h/t', colour: 'red' }],
    [
      'a key of another kind',
      { name: 'x', kind: 'webhook', url: 'http://h/', secret: WEBHOOK_SECRET, token: 't' },
    ],
    ['a missing key of the kind', { name: 'x', kind: 'telegram', bot_token: 'b' }],
    ['a NUL byte in the name', { name: 'x\u0000y', kind: 'ntfy', url: 'http://h/t' }],
    ['a NUL byte in the URL', { name: 'x', kind: 'ntfy', url: 'http://h/t\u0000' }],
    ['a line break in a header value', { name: 'x', kind: 'ntfy', url: 'http://h/t', token: 'a\r\nb' }],
    ['a URL that is no URL', { name: 'x', kind: 'ntfy', url: 'not a url' }],
    ['a file: URL', { name: 'x', kind: 'ntfy', url: 'file:///etc/passwd' }],
    ['a bad webhook secret', { name: 'x', kind: 'webhook', url: 'http://h/', secret: 'hunter2' }],
    [
      'an unknown time zone',
      {
        name: 'x',
        kind: 'ntfy',
        url: 'http://h/t',
        quiet_hours: { start: '22:00', end: '07:00', timezone: 'Mars/Olympus' },
      },
    ],
    [
      'a ca_file over HTTP',
      { name: 'x', kind: 'email', host: 'h', from: 'a@b.c', to: ['d@e.f'], ca_file: '/etc/passwd' },
    ],
    ['a 1 MB name', { name: 'x'.repeat(1_000_000), kind: 'ntfy', url: 'http://h/t' }],
    ['an array body', [{ name: 'x', kind: 'ntfy', url: 'http://h/t' }]],
  ];

  for (const [what, body] of cases) {
    it(`POST /notifications/targets with ${what}: 4xx in the Error shape, nothing created`, async () => {
      const before = (await api<TargetView[]>('GET', '/notifications/targets')).body;
      const response = await api<{ request_id: string; error_code: string; message: string }>(
        'POST',
        '/notifications/targets',
        body,
      );
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      expect(response.body).toEqual({
        request_id: expect.any(String),
        error_code: expect.any(String),
        message: expect.any(String),
      });
      expect((await api<TargetView[]>('GET', '/notifications/targets')).body).toEqual(before);
    });
  }

  it('PATCH with wrong types, or making a target invalid, changes nothing', async () => {
    const created = await api<TargetView>('POST', '/notifications/targets', {
      name: 'victim',
      kind: 'ntfy',
      url: `${http.url}/ntfy/victim`,
    });
    const id = created.body.id;
    for (const body of [
      { timeout_seconds: 'ten' },
      { kind: 'telegram' },
      { url: 'x'.repeat(1_000_000) },
      { name: null },
      { secret: 5 },
    ]) {
      const response = await api<{ error_code: string }>('PATCH', `/notifications/targets/${id}`, body);
      expect(response.status, JSON.stringify(body).slice(0, 40)).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
    }
    expect((await api<TargetView>('GET', `/notifications/targets/${id}`)).body).toEqual(created.body);
    expect((await api('DELETE', `/notifications/targets/${id}`)).status).toBe(204);
  });

  it('GET /notifications/deliveries refuses an unknown status and a limit out of range', async () => {
    expect((await api('GET', '/notifications/deliveries?status=lost')).status).toBe(400);
    expect((await api('GET', '/notifications/deliveries?limit=0')).status).toBe(400);
    expect((await api('GET', '/notifications/deliveries?limit=abc')).status).toBe(400);
    expect((await api('GET', `/notifications/targets/${'x'.repeat(100)}`)).status).toBe(400);
  });

  it('no secret ever reached the log, not even in the failures of the flaky target', () => {
    const log = logLines.join('');
    expect(log).toContain('notification attempt failed; will retry');
    for (const secret of SECRETS) expect(log).not.toContain(secret);
  });
});
