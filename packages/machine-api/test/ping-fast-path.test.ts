/**
 * The `GET`/`HEAD /ping` fast path (src/server/ping-fast-path.ts) over real HTTP: `inject` would bypass the
 * server's request listener, where the fast path lives. Its answer must be Fastify's, header for header in
 * the same order, but for the request id and the date: `/ping?x=1` is the same route through Fastify, so the
 * two are compared under each access setting, with and without `Origin`, and while the service closes.
 * A spy on the fast path tells which requests it answered, so a comparison cannot pass by both going to
 * Fastify.
 */

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { PingFastPath } from '../src/server/ping-fast-path.js';
import { startService } from '../src/service.js';
import { type MachineApiUnderTest, startMachineApi } from './harness.js';

interface Answer {
  status: number;
  /** Names and values in the order they came, names as sent. */
  headers: [string, string][];
  body: string;
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
afterAll(() => agent.destroy());

/** One request on a kept-alive connection, as a load balancer's health check sends it. */
function send(baseUrl: string, method: string, path: string, headers: Record<string, string> = {}) {
  const { hostname, port } = new URL(baseUrl);
  return new Promise<Answer>((resolve, reject) => {
    // `path` goes on the request line as given.
    const req = request({ host: hostname, port, path, method, headers, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => {
        const pairs: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          pairs.push([res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string]);
        }
        resolve({ status: res.statusCode ?? 0, headers: pairs, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The answer with the two values that differ per request masked (after checking they look right). */
function comparable(answer: Answer) {
  const headers = answer.headers.map(([name, value]): [string, string] => {
    if (name.toLowerCase() === 'x-request-id') {
      expect(value).toMatch(UUID);
      return [name, '<id>'];
    }
    if (name.toLowerCase() === 'date') {
      expect(Number.isNaN(Date.parse(value))).toBe(false);
      return [name, '<date>'];
    }
    return [name, value];
  });
  return { status: answer.status, headers, body: answer.body };
}

let answered: { mock: { calls: unknown[][] }; mockClear(): void };
beforeAll(() => {
  answered = vi.spyOn(PingFastPath.prototype as unknown as { answer(...args: unknown[]): void }, 'answer');
});

/** How many requests the fast path answered since the last call. */
function fastAnswers(): number {
  const count = answered.mock.calls.length;
  answered.mockClear();
  return count;
}

const SETTINGS: [string, string][] = [
  ['auth off (loopback default)', ''],
  ['auth = "keys", reads open to any origin', 'auth = "keys"\n'],
  [
    'auth = "keys", reads only from listed origins',
    'auth = "keys"\nallowed_origins = ["https://app.example.com"]\nread_origins = ["https://read.example.com"]\n',
  ],
];

const ORIGINS: [string, Record<string, string>, boolean][] = [
  ['no Origin', {}, true],
  ['a foreign Origin', { origin: 'https://evil.example' }, false],
  ['a listed Origin', { origin: 'https://app.example.com' }, false],
  ['a read Origin', { origin: 'https://read.example.com' }, false],
];

describe.each(SETTINGS)('GET and HEAD /ping with %s', (_name, server) => {
  let api: MachineApiUnderTest;
  beforeAll(async () => {
    api = await startMachineApi(`[server]\n${server}\n[machines.sim]\ntype = "Noop"\n`);
  });
  afterAll(async () => {
    await api?.close();
  });
  afterEach(() => {
    answered.mockClear();
  });

  for (const method of ['GET', 'HEAD']) {
    for (const [originName, headers, fast] of ORIGINS) {
      it(`${method} with ${originName}: the same answer as Fastify's${fast ? ', from the fast path' : ''}`, async () => {
        fastAnswers();
        const direct = await send(api.baseUrl, method, '/ping', headers);
        expect(fastAnswers()).toBe(fast ? 1 : 0);
        const viaFastify = await send(api.baseUrl, method, '/ping?x=1', headers);
        expect(fastAnswers()).toBe(0);
        expect(comparable(direct)).toEqual(comparable(viaFastify));
        expect(direct.status).toBe(200);
        expect(direct.body).toBe(method === 'HEAD' ? '' : '{"message":"pong"}');
        // What every answer of the service says today: Fastify's 72 s keep-alive, not Node's 5 s.
        expect(direct.headers.filter(([name]) => /^(connection|keep-alive)$/i.test(name))).toEqual([
          ['Connection', 'keep-alive'],
          ['Keep-Alive', 'timeout=72'],
        ]);
        const id = (answer: Answer) => answer.headers.find(([name]) => name === 'x-request-id')?.[1];
        expect(id(direct)).not.toBe(id(viaFastify));
      });
    }
  }

  it('answers without Origin exactly as before the fast path', async () => {
    const answer = comparable(await send(api.baseUrl, 'GET', '/ping'));
    const cors = server.includes('read_origins')
      ? []
      : [
          ['access-control-allow-origin', '*'],
          ['access-control-expose-headers', 'x-request-id'],
        ];
    expect(answer).toEqual({
      status: 200,
      headers: [
        ['x-request-id', '<id>'],
        ['vary', 'Origin'],
        ...cors,
        ['content-type', 'application/json; charset=utf-8'],
        ['content-length', '18'],
        ['Date', '<date>'],
        ['Connection', 'keep-alive'],
        ['Keep-Alive', 'timeout=72'],
      ],
      body: '{"message":"pong"}',
    });
  });

  it('POST /ping is still refused with 405 and Allow, by Fastify', async () => {
    const answer = await send(api.baseUrl, 'POST', '/ping');
    expect(fastAnswers()).toBe(0);
    expect(answer.status).toBe(405);
    expect(answer.headers).toContainEqual(['allow', 'GET, HEAD']);
    const body = JSON.parse(answer.body);
    expect(body).toEqual({
      request_id: answer.headers.find(([name]) => name === 'x-request-id')?.[1],
      error_code: 'MethodNotAllowed',
      message: 'POST is not allowed on /ping; allowed: GET, HEAD',
    });
  });

  it('other spellings of the URL go to Fastify', async () => {
    for (const path of ['/ping/', '/PING', '/ping?', '//ping', '/./ping']) {
      await send(api.baseUrl, 'GET', path);
    }
    expect(fastAnswers()).toBe(0);
  });
});

describe('the server the fast path listens on', () => {
  it('has the timeouts Fastify gives the servers it creates itself', async () => {
    const api = await startMachineApi('');
    try {
      const { server } = api.service.app;
      // Fastify resolves these too; its type lists only some of them.
      const initialConfig = api.service.app.initialConfig as { [name: string]: unknown };
      expect({
        keepAlive: server.keepAliveTimeout,
        request: server.requestTimeout,
        idle: server.timeout,
        perSocket: server.maxRequestsPerSocket,
      }).toEqual({
        keepAlive: initialConfig.keepAliveTimeout,
        request: initialConfig.requestTimeout,
        idle: initialConfig.connectionTimeout,
        perSocket: initialConfig.maxRequestsPerSocket,
      });
      // Fastify's defaults: 72 s keep-alive, no request deadline (Node's own would be 5 s and 300 s).
      expect(server.keepAliveTimeout).toBe(72_000);
      expect(server.requestTimeout).toBe(0);
    } finally {
      await api.close();
    }
  });
});

describe('/metrics counts the fast answers as Fastify counts its own', () => {
  let api: MachineApiUnderTest;
  beforeAll(async () => {
    api = await startMachineApi('[server]\nmetrics_auth = "open"\n');
  });
  afterAll(async () => {
    await api?.close();
  });

  /** The request counts per label set `route="/ping"`, from the exposition text. */
  async function pingCounts(): Promise<Record<string, number>> {
    const text = (await send(api.baseUrl, 'GET', '/metrics')).body;
    const counts: Record<string, number> = {};
    for (const match of text.matchAll(
      /^machine_api_http_request_duration_seconds_count\{([^}]*route="\/ping"[^}]*)\} (\d+)$/gm,
    )) {
      counts[match[1] as string] = Number(match[2]);
    }
    return counts;
  }

  it('under the same labels, one observation per answer', async () => {
    fastAnswers();
    for (let i = 0; i < 3; i++) await send(api.baseUrl, 'GET', '/ping');
    for (let i = 0; i < 2; i++) await send(api.baseUrl, 'HEAD', '/ping');
    expect(fastAnswers()).toBe(5);
    expect(await pingCounts()).toEqual({
      'method="GET",route="/ping",status_code="200"': 3,
      'method="HEAD",route="/ping",status_code="200"': 2,
    });
    // Through Fastify: the same label sets go up.
    await send(api.baseUrl, 'GET', '/ping?x=1');
    await send(api.baseUrl, 'HEAD', '/ping?x=1');
    expect(fastAnswers()).toBe(0);
    expect(await pingCounts()).toEqual({
      'method="GET",route="/ping",status_code="200"': 4,
      'method="HEAD",route="/ping",status_code="200"': 3,
    });
  });
});

describe('with debug logging', () => {
  it('Fastify answers, so every /ping gets its access log line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'machine-api-ping-'));
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, callback) {
        lines.push(String(chunk));
        callback();
      },
    });
    const configPath = join(dir, 'machine-api.toml');
    await writeFile(configPath, '[server]\n');
    const service = await startService({
      configPath,
      dataDir: join(dir, 'data'),
      host: '127.0.0.1',
      port: 0,
      logger: pino({ level: 'debug' }, sink),
      mdnsDefault: false,
    });
    try {
      fastAnswers();
      const answer = await send(service.url, 'GET', '/ping');
      expect(answer.status).toBe(200);
      expect(fastAnswers()).toBe(0);
      const id = answer.headers.find(([name]) => name === 'x-request-id')?.[1];
      const logged = lines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'request');
      expect(logged).toContainEqual(
        expect.objectContaining({ reqId: id, method: 'GET', url: '/ping', status: 200 }),
      );
    } finally {
      await service.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/**
 * Opens a connection and starts a request that stays in flight (a body still to come), so the connection
 * is busy when the service begins to close; `finish` sends the rest of that body and `next` right behind it
 * on the same connection, and resolves with everything the server sent until it closed the connection.
 */
async function busyConnection(baseUrl: string) {
  const url = new URL(baseUrl);
  const socket = connect({ host: url.hostname, port: Number(url.port) });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let received = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk) => (received += chunk));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(
    'POST /ping HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{',
  );
  return {
    finish: async (next: string) => {
      socket.write(`}${next}`);
      await closed;
      return received;
    },
  };
}

/** The last HTTP answer in `text` (several pipelined ones), as an Answer. */
function lastAnswer(text: string): Answer {
  const start = text.lastIndexOf('HTTP/1.1 ');
  const [head = '', body = ''] = text.slice(start).split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  return {
    status: Number(statusLine.split(' ')[1]),
    headers: lines.map((line): [string, string] => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon), line.slice(colon + 1).trim()];
    }),
    body,
  };
}

describe('while the service closes', () => {
  it('GET /ping gets what Fastify gives then (503, Connection: close)', async () => {
    const api = await startMachineApi('');
    const fast = await busyConnection(api.baseUrl);
    const slow = await busyConnection(api.baseUrl);
    // Both connections are busy before close begins, so they stay open.
    await new Promise((resolve) => setTimeout(resolve, 100));
    fastAnswers();
    const closing = api.close();
    await new Promise<void>((resolve) => {
      const check = () => (api.service.app.server.listening ? setTimeout(check, 5) : resolve());
      check();
    });
    const request = (path: string) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
    const [direct, viaFastify] = await Promise.all([
      fast.finish(request('/ping')),
      slow.finish(request('/ping?x=1')),
    ]);
    await closing;
    expect(fastAnswers()).toBe(0);
    const answer = lastAnswer(direct);
    expect(answer.status).toBe(503);
    expect(answer.headers).toContainEqual(['Connection', 'close']);
    expect(comparable(answer)).toEqual(comparable(lastAnswer(viaFastify)));
  });
});
