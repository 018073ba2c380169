/**
 * A Spoolman simulator for tests: a real HTTP server on 127.0.0.1 speaking the documented REST API
 * (https://donkie.github.io/Spoolman/, Donkie/Spoolman spoolman/api/v1): `GET /api/v1/spool/{id}`,
 * `PUT /api/v1/spool/{id}/use` (exactly one of `use_length` mm / `use_weight` g, else 400), errors as
 * `{"message": …}` with 404 for an unknown spool.
 *
 * Fault switches: `down()` closes the listener and every connection (connection refused, like a stopped
 * Spoolman) and `up()` listens again on the same port; `faults.serverError` answers 500;
 * `faults.holdUse` applies a use and then holds its answer (the client never learns it was applied) until
 * `releaseHeld()` or `down()`.
 * Every accepted use is kept in `uses` (in arrival order) so a test can check each arrived exactly once.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface SimFilament {
  id: number;
  name: string | null;
  material: string | null;
  color_hex: string | null;
  density: number;
  diameter: number;
  /** Net weight of a full spool, grams. */
  weight: number | null;
  price: number | null;
}

export interface SimSpool {
  id: number;
  filament: SimFilament;
  price: number | null;
  remaining_weight: number;
  used_weight: number;
  used_length: number;
}

export interface SimUse {
  spool: number;
  use_length?: number;
  use_weight?: number;
}

export class SpoolmanSim {
  readonly spools = new Map<number, SimSpool>();
  readonly uses: SimUse[] = [];
  readonly faults = { serverError: false, holdUse: false };
  /** Answers of applied uses held back by `faults.holdUse`. */
  readonly held: (() => void)[] = [];
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Adds a spool of a full `weight` g with `remaining` g left. */
  addSpool(spool: {
    id: number;
    remaining: number;
    price?: number | null;
    filament?: Partial<SimFilament>;
  }): SimSpool {
    const filament: SimFilament = {
      id: spool.id,
      name: 'Galaxy Black',
      material: 'PLA',
      color_hex: '1A1A1A',
      density: 1.24,
      diameter: 1.75,
      weight: 1000,
      price: 20,
      ...spool.filament,
    };
    const row: SimSpool = {
      id: spool.id,
      filament,
      price: spool.price ?? null,
      remaining_weight: spool.remaining,
      used_weight: 0,
      used_length: 0,
    };
    this.spools.set(spool.id, row);
    return row;
  }

  async start(): Promise<this> {
    await this.up();
    return this;
  }

  /** Listens (again) on the same port. */
  async up(): Promise<void> {
    if (this.server) return;
    const server = createServer((req, res) => this.handle(req, res));
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** Stops listening and drops every connection: requests are refused until `up()`. */
  async down(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Sends the held answers. */
  releaseHeld(): void {
    for (const answer of this.held.splice(0)) answer();
  }

  close(): Promise<void> {
    return this.down();
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (this.faults.serverError) return send(res, 500, { message: 'Internal Server Error' });
      const url = new URL(req.url ?? '/', 'http://spoolman');
      const get = /^\/api\/v1\/spool\/(\d+)$/.exec(url.pathname);
      const use = /^\/api\/v1\/spool\/(\d+)\/use$/.exec(url.pathname);
      if (req.method === 'GET' && get) {
        const spool = this.spools.get(Number(get[1]));
        if (!spool) return send(res, 404, { message: `No spool with ID ${get[1]} found.` });
        return send(res, 200, view(spool));
      }
      if (req.method === 'PUT' && use) {
        const spool = this.spools.get(Number(use[1]));
        if (!spool) return send(res, 404, { message: `No spool with ID ${use[1]} found.` });
        let body: { use_length?: unknown; use_weight?: unknown };
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) ?? {};
        } catch {
          return send(res, 422, { detail: [{ msg: 'JSON decode error' }] });
        }
        const length = typeof body.use_length === 'number' ? body.use_length : undefined;
        const weight = typeof body.use_weight === 'number' ? body.use_weight : undefined;
        if ((length === undefined) === (weight === undefined))
          return send(res, 400, { message: 'Only specify either use_weight or use_length.' });
        const f = spool.filament;
        const grams = weight ?? ((length ?? 0) / 10) * Math.PI * (f.diameter / 20) ** 2 * f.density;
        spool.used_weight += grams;
        spool.used_length += length ?? 0;
        spool.remaining_weight -= grams;
        this.uses.push({
          spool: spool.id,
          ...(length !== undefined ? { use_length: length } : { use_weight: weight }),
        });
        if (this.faults.holdUse) {
          this.held.push(() => send(res, 200, view(spool)));
          return;
        }
        return send(res, 200, view(spool));
      }
      send(res, 404, { message: 'Not Found' });
    });
  }
}

function view(spool: SimSpool): unknown {
  return { ...spool, registered: '2026-01-01T00:00:00Z', archived: false };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
