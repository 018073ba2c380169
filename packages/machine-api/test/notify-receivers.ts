/**
 * Local receivers for notification tests, speaking each service's documented API: one HTTP server that
 * records every request (webhook, ntfy, Discord, Telegram all arrive over HTTP) and answers as the test
 * tells it (a status, `Retry-After`, or never), and a real SMTP server (`smtp-server`) with STARTTLS and
 * AUTH PLAIN/LOGIN that records each message.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';
import { SMTPServer } from 'smtp-server';

export interface ReceivedRequest {
  method: string;
  /** Path and query. */
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  /** When it arrived (epoch ms). */
  at: number;
}

/** What the receiver answers: a status (and headers/body), or `hang` (accept, never answer). */
export type Answer =
  | { status: number; headers?: Record<string, string>; body?: string | Buffer; delayMs?: number }
  | 'hang';

export class HttpReceiver {
  readonly requests: ReceivedRequest[] = [];
  /** Decides the answer per request; default 200 `{"ok":true}`. */
  answer: (request: ReceivedRequest) => Answer = () => ({ status: 200, body: '{"ok":true}' });
  private readonly hanging = new Set<ServerResponse>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<HttpReceiver> {
    let receiver: HttpReceiver | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => receiver?.handle(req, res, Buffer.concat(chunks)));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    receiver = new HttpReceiver(server, `http://127.0.0.1:${port}`);
    return receiver;
  }

  private handle(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
    const request: ReceivedRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body,
      at: Date.now(),
    };
    this.requests.push(request);
    const answer = this.answer(request);
    if (answer === 'hang') {
      this.hanging.add(res);
      return;
    }
    const send = () => {
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body ?? '{"ok":true}');
    };
    if (answer.delayMs) setTimeout(send, answer.delayMs);
    else send();
  }

  /** Requests to paths starting with `prefix`. */
  to(prefix: string): ReceivedRequest[] {
    return this.requests.filter((request) => request.url.startsWith(prefix));
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A multipart/form-data body as the receiving service would parse it. */
export async function formData(request: ReceivedRequest): Promise<FormData> {
  return new Response(request.body, {
    headers: { 'content-type': String(request.headers['content-type']) },
  }).formData();
}

export interface ReceivedMail {
  from: string;
  to: string[];
  user: string | null;
  secure: boolean;
  /** The raw message (headers and MIME body). */
  raw: string;
}

export class SmtpReceiver {
  readonly mails: ReceivedMail[] = [];
  /** The certificate (PEM) the server presents; the service is told to trust it with `ca_file`. */
  readonly cert: string;

  private constructor(
    private readonly server: SMTPServer,
    readonly port: number,
    cert: string,
  ) {
    this.cert = cert;
  }

  static async start(credentials: { user: string; pass: string }): Promise<SmtpReceiver> {
    const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
      keySize: 2048,
      algorithm: 'sha256',
    });
    let receiver: SmtpReceiver | undefined;
    const server = new SMTPServer({
      key: pems.private,
      cert: pems.cert,
      authMethods: ['PLAIN', 'LOGIN'],
      logger: false,
      onAuth(auth, _session, callback) {
        if (auth.username === credentials.user && auth.password === credentials.pass) {
          callback(null, { user: auth.username });
        } else {
          callback(new Error('Invalid username or password'));
        }
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          receiver?.mails.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
            user: (session.user as string | undefined) ?? null,
            secure: session.secure,
            raw: Buffer.concat(chunks).toString('utf8'),
          });
          callback(null);
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = (server as unknown as { server: Server }).server.address() as AddressInfo;
    receiver = new SmtpReceiver(server, port, pems.cert);
    return receiver;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
