/**
 * A Moonraker simulator for tests: a real HTTP + websocket server on 127.0.0.1 (port 0) speaking the
 * documented API (Arksine/moonraker docs/external_api): `{"result": …}` envelopes, errors as
 * `{"error": {"code", "message"}}`, the upload answer (201, not wrapped), JSON-RPC 2.0 on `/websocket`
 * with `printer.objects.subscribe` and `notify_status_update` diffs, and the `notify_klippy_*` events; the
 * webcam registry (`/server/webcams/list`, `notify_webcams_changed`).
 *
 * Behind it sits a simulated Klipper: a gcodes root in memory, `print_stats`, `virtual_sdcard`,
 * `extruder`, `heater_bed` and `webhooks`. A started print advances either by itself (`autoProgress`) or
 * when the test calls `advance()`. Fault switches: `faults.delayMs` (slow), `refuse()`/`acceptAgain()`
 * (connections refused), `faults.serverError` (every request answers 500), `failNext()` (one endpoint
 * answers an error), `die()` (Moonraker and Klipper gone, mid-print).
 */

import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import multipart from '@fastify/multipart';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { type WebSocket, WebSocketServer } from 'ws';

type Fields = Record<string, unknown>;
type Objects = Record<string, Fields>;

export interface MoonrakerSimOptions {
  /** When set, every request must carry it as `X-Api-Key` (else 401). */
  apiKey?: string;
  /** Advance a running print by `step` (fraction of the file) every `tickMs`. Off: the test calls advance(). */
  autoProgress?: { tickMs: number; step: number };
  /** Printer has a heated bed (`heater_bed` object). Default true. */
  heatedBed?: boolean;
  /** Serve `/websocket`. Default true; false makes clients fall back to polling. */
  websocket?: boolean;
}

export interface SimFaults {
  /** Delay of every HTTP answer, websocket answer and pong. */
  delayMs: number;
  /** Every HTTP request answers 500 and websocket upgrades are refused (see `breakDown()`). */
  serverError: boolean;
}

interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  args: Fields;
}

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const GCODE_EXTENSIONS = ['.gcode', '.g', '.gco', '.ufp', '.nc'];

export class MoonrakerSim {
  readonly faults: SimFaults = { delayMs: 0, serverError: false };
  /** The gcodes root: path relative to the root → content. */
  readonly files = new Map<string, Buffer>();
  /** Every HTTP request received, in order (to assert headers, arguments and call sequences). */
  readonly requests: RecordedRequest[] = [];
  /** Every line of G-code run through `printer.gcode.script`, in order. */
  readonly scripts: string[] = [];
  klippy = { connected: true, state: 'ready', message: 'Printer is ready' };
  readonly objects: Objects;
  private readonly app: FastifyInstance;
  private readonly wss: WebSocketServer;
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private readonly subscriptions = new Map<
    WebSocket,
    { objects: Record<string, string[] | null>; sent: Objects }
  >();
  private readonly failures = new Map<string, { status: number; message: string }>();
  private ticker: NodeJS.Timeout | null = null;
  private port = 0;
  /** The webcam registry (`/server/webcams/list`): what Mainsail and Fluidd show. Change it with `setWebcams`. */
  private webcams: Fields[] = [];

  private constructor(private readonly options: MoonrakerSimOptions) {
    this.objects = {
      webhooks: { state: 'ready', state_message: 'Printer is ready' },
      print_stats: idleStats(),
      virtual_sdcard: { file_path: null, progress: 0, is_active: false, file_position: 0, file_size: 0 },
      extruder: { temperature: 22.5, target: 0, power: 0, can_extrude: false, pressure_advance: 0 },
      ...(options.heatedBed === false ? {} : { heater_bed: { temperature: 21.8, target: 0, power: 0 } }),
      toolhead: { homed_axes: '', print_time: 0, status: 'Ready' },
    };
    this.app = Fastify({ logger: false });
    this.wss = new WebSocketServer({ noServer: true, autoPong: false });
  }

  /** Starts the simulator on 127.0.0.1, on a free port. */
  static async start(options: MoonrakerSimOptions = {}): Promise<MoonrakerSim> {
    const sim = new MoonrakerSim(options);
    await sim.setUp();
    await sim.listen(0);
    return sim;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get printStats(): Fields {
    return this.objects['print_stats']!;
  }

  /** Connected websocket clients. */
  get websocketCount(): number {
    return this.wss.clients.size;
  }

  /**
   * Replaces the webcam registry, as adding or editing a webcam in Mainsail does, and announces it with
   * `notify_webcams_changed` (params: `[{webcams}]`). Fields not given take Moonraker's defaults.
   */
  setWebcams(webcams: Fields[]): void {
    this.webcams = webcams.map((cam, index) => ({
      name: `cam${index + 1}`,
      location: 'printer',
      service: 'mjpegstreamer-adaptive',
      enabled: true,
      icon: 'mdiWebcam',
      target_fps: 15,
      target_fps_idle: 5,
      stream_url: '/webcam/?action=stream',
      snapshot_url: '/webcam/?action=snapshot',
      flip_horizontal: false,
      flip_vertical: false,
      rotation: 0,
      aspect_ratio: '4:3',
      extra_data: {},
      source: 'database',
      uid: `00000000-0000-4000-8000-00000000000${index}`,
      ...cam,
    }));
    this.notifyAll('notify_webcams_changed', [{ webcams: this.webcams }]);
  }

  /** Refuses connections from now on: stops listening and drops every open connection. */
  async refuse(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    for (const client of this.wss.clients) client.terminate();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Listens again on the same port after `refuse()`. */
  async acceptAgain(): Promise<void> {
    if (!this.server) await this.listen(this.port);
  }

  /** Moonraker and Klipper die: connections refused, and the print stops advancing. */
  async die(): Promise<void> {
    this.stopTicker();
    await this.refuse();
  }

  /** Moonraker breaks down without going away: open websockets drop, every request answers 500. */
  breakDown(broken: boolean): void {
    this.faults.serverError = broken;
    if (broken) for (const client of this.wss.clients) client.terminate();
  }

  /** The next request to `path` (e.g. `/server/files/upload`) answers `status` with Moonraker's error body. */
  failNext(path: string, status: number, message: string): void {
    this.failures.set(path, { status, message });
  }

  /** Advances the running print by `fraction` of its file; completes it at 100 %. */
  advance(fraction: number): void {
    if (this.printStats['state'] !== 'printing') return;
    const sd = this.objects['virtual_sdcard']!;
    const progress = Math.min(1, (sd['progress'] as number) + fraction);
    sd['progress'] = progress;
    sd['file_position'] = Math.round(progress * (sd['file_size'] as number));
    this.printStats['print_duration'] = (this.printStats['print_duration'] as number) + 1;
    this.printStats['total_duration'] = (this.printStats['total_duration'] as number) + 1;
    this.printStats['filament_used'] = Math.round(progress * 1500 * 100) / 100;
    this.heat();
    if (progress >= 1) this.finishPrint('complete');
    this.publish();
  }

  /** What Klipper reports as `print_stats.filament_used` from now on (a broken or hostile device's value). */
  setFilamentUsed(value: unknown): void {
    this.printStats['filament_used'] = value;
    this.publish();
  }

  /** A heater's sensor reads `celsius` now (a heater warming or cooling); subscribers get the change. */
  setTemperature(heater: 'extruder' | 'heater_bed', celsius: number): void {
    const object = this.objects[heater];
    if (!object) return;
    object['temperature'] = celsius;
    this.publish();
  }

  /** Klipper stops the print with an error (e.g. a move out of range). */
  failPrint(message: string): void {
    this.finishPrint('error', message);
    this.publish();
  }

  /** Klippy changes state, with the notifications Moonraker sends. */
  setKlippy(state: 'ready' | 'startup' | 'shutdown' | 'error' | 'disconnected', message: string): void {
    this.klippy = { connected: state !== 'disconnected', state, message };
    if (state === 'disconnected') {
      this.notifyAll('notify_klippy_disconnected');
      return;
    }
    this.objects['webhooks'] = { state, state_message: message };
    if (state === 'shutdown' || state === 'error') {
      if (this.printStats['state'] === 'printing' || this.printStats['state'] === 'paused') {
        this.finishPrint('error', message);
      }
      this.notifyAll('notify_klippy_shutdown');
    }
    if (state === 'ready') this.notifyAll('notify_klippy_ready');
    this.publish();
  }

  /** Klipper restarts: print state lost, back to standby. */
  restartKlipper(): void {
    this.setKlippy('disconnected', 'Klippy restarting');
    this.objects['print_stats'] = idleStats();
    this.objects['virtual_sdcard'] = {
      file_path: null,
      progress: 0,
      is_active: false,
      file_position: 0,
      file_size: 0,
    };
    this.setKlippy('ready', 'Printer is ready');
  }

  async close(): Promise<void> {
    this.stopTicker();
    await this.refuse();
    this.wss.close();
    await this.app.close();
  }

  private async listen(port: number): Promise<void> {
    const server = createServer((request, reply) => this.app.routing(request, reply));
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    server.on('upgrade', (request, socket, head) => this.upgrade(request, socket as Socket, head));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  private async setUp(): Promise<void> {
    const app = this.app;
    await app.register(multipart, { limits: { fileSize: 512 * 1024 * 1024 } });
    app.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string' },
      (_req, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body as string)));
      },
    );
    app.addHook('onRequest', async (request, reply) => {
      this.requests.push({
        method: request.method,
        path: request.url.split('?')[0]!,
        headers: request.headers,
        args: { ...(request.query as Fields) },
      });
      if (this.faults.delayMs > 0) await sleep(this.faults.delayMs);
      if (this.faults.serverError) return fail(reply, 500, 'Internal Server Error');
      if (this.options.apiKey && request.headers['x-api-key'] !== this.options.apiKey) {
        return fail(reply, 401, 'Unauthorized');
      }
      const failure = this.failures.get(request.url.split('?')[0]!);
      if (failure) {
        this.failures.delete(request.url.split('?')[0]!);
        return fail(reply, failure.status, failure.message);
      }
    });
    app.setErrorHandler((error: { statusCode?: number; message: string }, _request, reply) => {
      fail(reply, error instanceof RpcError ? error.code : (error.statusCode ?? 500), error.message);
    });
    app.setNotFoundHandler((_request, reply) => fail(reply, 404, 'Not Found'));

    const rpc = (method: string) => async (request: FastifyRequest) => ({
      result: await this.call(method, argsOf(request)),
    });
    app.get('/server/info', rpc('server.info'));
    app.get('/printer/info', rpc('printer.info'));
    // The anchor sends POST here; the Neptune 4's Moonraker accepted it.
    app.post('/printer/info', rpc('printer.info'));
    app.get('/printer/objects/list', rpc('printer.objects.list'));
    app.get('/printer/objects/query', rpc('printer.objects.query'));
    app.post('/printer/objects/query', rpc('printer.objects.query'));
    app.post('/printer/print/start', rpc('printer.print.start'));
    app.post('/printer/print/pause', rpc('printer.print.pause'));
    app.post('/printer/print/resume', rpc('printer.print.resume'));
    app.post('/printer/print/cancel', rpc('printer.print.cancel'));
    app.post('/printer/gcode/script', rpc('printer.gcode.script'));
    app.post('/printer/emergency_stop', rpc('printer.emergency_stop'));
    app.get('/server/temperature_store', rpc('server.temperature_store'));
    app.get('/server/webcams/list', rpc('server.webcams.list'));
    app.delete('/server/files/gcodes/*', async (request) => {
      const path = decodeURIComponent((request.params as { '*': string })['*']);
      if (!this.files.delete(path)) throw new RpcError(404, `File ${path} does not exist`);
      return { result: { item: { path, root: 'gcodes' }, action: 'delete_file' } };
    });
    app.post('/server/files/upload', (request, reply) => this.upload(request, reply));
    await app.ready();
  }

  /** `POST /server/files/upload`: multipart `file` plus optional `root`, `path`, `print`. */
  private async upload(request: FastifyRequest, reply: FastifyReply) {
    const fields: Record<string, string> = {};
    let file: { name: string; data: Buffer } | null = null;
    for await (const part of request.parts()) {
      if (part.type === 'file') file = { name: part.filename, data: await part.toBuffer() };
      else fields[part.fieldname] = String(part.value);
    }
    this.requests.at(-1)!.args = {
      ...fields,
      ...(file ? { filename: file.name, size: file.data.length } : {}),
    };
    if (!file) throw new RpcError(400, 'No file name specifed in upload form');
    const root = fields['root'] ?? 'gcodes';
    if (root !== 'gcodes' && root !== 'config') throw new RpcError(400, `Invalid root request: ${root}`);
    const name = [fields['path'], file.name].filter(Boolean).join('/').replace(/^\/+/, '');
    if (name.split('/').some((segment) => segment === '..' || segment === '')) {
      throw new RpcError(400, `Cannot write to path: ${name}`);
    }
    if (root === 'gcodes' && !GCODE_EXTENSIONS.some((ext) => name.toLowerCase().endsWith(ext))) {
      throw new RpcError(
        400,
        `Uploaded files to gcodes root must have one of: ${GCODE_EXTENSIONS.join(', ')}`,
      );
    }
    const checksum = fields['checksum'];
    if (checksum !== undefined && checksum !== createHash('sha256').update(file.data).digest('hex')) {
      throw new RpcError(422, `File checksum mismatch: expected ${checksum}`);
    }
    if (root === 'gcodes') this.files.set(name, file.data);
    let printStarted = false;
    if (fields['print'] === 'true' && root === 'gcodes') {
      this.startPrint(name);
      printStarted = true;
    }
    reply.code(201).header('Location', `${this.endpoint}/server/files/${root}/${encodeURI(name)}`);
    return {
      item: { path: name, root, modified: Date.now() / 1000, size: file.data.length, permissions: 'rw' },
      print_started: printStarted,
      print_queued: false,
      action: 'create_file',
    };
  }

  /** One JSON-RPC method, shared by the HTTP routes and the websocket. */
  private async call(method: string, args: Fields, socket?: WebSocket): Promise<unknown> {
    switch (method) {
      case 'server.info':
        return {
          klippy_connected: this.klippy.connected,
          klippy_state: this.klippy.state,
          components: ['klippy_connection', 'application', 'websockets', 'file_manager', 'klippy_apis'],
          failed_components: [],
          registered_directories: ['config', 'gcodes', 'logs'],
          warnings: [],
          websocket_count: this.wss.clients.size,
          moonraker_version: 'v0.9.3-12-gsim',
          api_version: [1, 5, 0],
          api_version_string: '1.5.0',
        };
      case 'server.connection.identify':
        return { connection_id: 4242 };
      case 'server.temperature_store':
        return this.temperatureStore();
      case 'server.webcams.list':
        return { webcams: this.webcams };
    }
    if (!this.klippy.connected) throw new RpcError(503, 'Klippy Host not connected');
    switch (method) {
      case 'printer.info':
        return {
          state: this.klippy.state,
          state_message: this.klippy.message,
          hostname: 'moonraker-sim',
          klipper_path: '/home/pi/klipper',
          python_path: '/home/pi/klippy-env/bin/python',
          log_file: '/home/pi/printer_data/logs/klippy.log',
          config_file: '/home/pi/printer_data/config/printer.cfg',
          software_version: 'v0.12.0-sim',
          cpu_info: '4 core ARMv8 (simulated)',
        };
      case 'printer.objects.list':
        return { objects: Object.keys(this.objects) };
      case 'printer.objects.query':
        return { eventtime: eventtime(), status: this.select(objectsArgument(args)) };
      case 'printer.objects.subscribe': {
        if (!socket) throw new RpcError(400, 'Subscriptions need a persistent connection');
        const objects = objectsArgument(args);
        const status = this.select(objects);
        this.subscriptions.set(socket, { objects, sent: structuredClone(status) });
        return { eventtime: eventtime(), status };
      }
    }
    if (this.klippy.state !== 'ready') throw new RpcError(503, `Klippy not ready: ${this.klippy.message}`);
    switch (method) {
      case 'printer.print.start':
        if (typeof args['filename'] !== 'string') throw new RpcError(400, "No data for argument: 'filename'");
        this.startPrint(args['filename'].replace(/^\/+/, ''));
        return 'ok';
      case 'printer.print.pause':
        if (this.printStats['state'] === 'printing') {
          this.printStats['state'] = 'paused';
          this.objects['virtual_sdcard']!['is_active'] = false;
        } else if (this.printStats['state'] !== 'paused') {
          throw new RpcError(400, 'No print in progress to pause');
        }
        break;
      case 'printer.print.resume':
        if (this.printStats['state'] === 'paused') {
          this.printStats['state'] = 'printing';
          this.objects['virtual_sdcard']!['is_active'] = true;
        } else if (this.printStats['state'] !== 'printing') {
          throw new RpcError(400, 'No paused print to resume');
        }
        break;
      case 'printer.print.cancel':
        if (this.printStats['state'] !== 'printing' && this.printStats['state'] !== 'paused') {
          throw new RpcError(400, 'No print in progress to cancel');
        }
        this.finishPrint('cancelled');
        break;
      case 'printer.gcode.script':
        for (const line of String(args['script']).split('\n')) this.runGcode(line.trim());
        break;
      case 'printer.emergency_stop':
        this.setKlippy('shutdown', 'Shutdown due to webhooks request');
        return 'ok';
      default:
        throw new RpcError(404, `Method not found: ${method}`);
    }
    this.publish();
    return 'ok';
  }

  /** One line of `printer.gcode.script`: the reset, and Klipper's heater commands (others are accepted and ignored). */
  private runGcode(line: string): void {
    const upper = line.toUpperCase();
    this.scripts.push(line);
    if (upper === 'SDCARD_RESET_FILE') {
      this.objects['print_stats'] = idleStats();
      Object.assign(this.objects['virtual_sdcard']!, { file_path: null, progress: 0, is_active: false });
      return;
    }
    const set = /^SET_HEATER_TEMPERATURE\s+HEATER=(\S+)\s+TARGET=(\d+(?:\.\d+)?)$/.exec(upper);
    const marlin = /^M1(04|40)\s+S(\d+(?:\.\d+)?)$/.exec(upper);
    if (!set && !marlin) return;
    const heater = set ? set[1]!.toLowerCase() : marlin![1] === '04' ? 'extruder' : 'heater_bed';
    const object = this.objects[heater];
    // Klipper's own words for a heater the printer does not have.
    if (!object || (heater !== 'extruder' && heater !== 'heater_bed'))
      throw new RpcError(400, `The value '${heater}' is not valid for HEATER`);
    object['target'] = Number(set ? set[2] : marlin![2]);
  }

  /** Klipper's `SDCARD_PRINT_FILE`: refuses while busy or when the file is missing. */
  private startPrint(filename: string): void {
    const state = this.printStats['state'];
    if (state === 'printing' || state === 'paused') throw new RpcError(400, 'SD busy');
    const data = this.files.get(filename);
    if (!data) throw new RpcError(400, `Unable to open file "${filename}"`);
    const text = data.toString('latin1');
    this.objects['print_stats'] = { ...idleStats(), state: 'printing', filename };
    this.objects['virtual_sdcard'] = {
      file_path: `/home/pi/printer_data/gcodes/${filename}`,
      progress: 0,
      is_active: true,
      file_position: 0,
      file_size: data.length,
    };
    this.objects['extruder']!['target'] = temperatureIn(text, /^M10[49]\s.*?S(\d+(?:\.\d+)?)/m) ?? 200;
    if (this.objects['heater_bed']) {
      this.objects['heater_bed']['target'] = temperatureIn(text, /^M1(?:40|90)\s.*?S(\d+(?:\.\d+)?)/m) ?? 60;
    }
    this.publish();
    this.startTicker();
  }

  private finishPrint(state: 'complete' | 'cancelled' | 'error', message = ''): void {
    Object.assign(this.printStats, { state, message });
    this.objects['virtual_sdcard']!['is_active'] = false;
    this.objects['extruder']!['target'] = 0;
    if (this.objects['heater_bed']) this.objects['heater_bed']['target'] = 0;
    this.stopTicker();
  }

  private heat(): void {
    for (const name of ['extruder', 'heater_bed']) {
      const heater = this.objects[name];
      if (!heater) continue;
      const current = heater['temperature'] as number;
      const target = (heater['target'] as number) || 22;
      heater['temperature'] = Math.round((current + (target - current) * 0.5) * 100) / 100;
    }
  }

  private startTicker(): void {
    const auto = this.options.autoProgress;
    if (!auto || this.ticker) return;
    this.ticker = setInterval(() => this.advance(auto.step), auto.tickMs);
  }

  private stopTicker(): void {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = null;
  }

  private temperatureStore(): Fields {
    const store: Fields = {};
    for (const name of ['extruder', 'heater_bed']) {
      const heater = this.objects[name];
      if (heater)
        store[name] = { temperatures: [heater['temperature']], targets: [heater['target']], powers: [0] };
    }
    return store;
  }

  /** The requested objects and fields (`null` = all fields); unknown objects are left out, as Klipper does. */
  private select(request: Record<string, string[] | null>): Objects {
    const status: Objects = {};
    for (const [name, fields] of Object.entries(request)) {
      const object = this.objects[name];
      if (!object) continue;
      status[name] = fields
        ? Object.fromEntries(fields.filter((f) => f in object).map((f) => [f, object[f]]))
        : {};
      if (!fields) Object.assign(status[name], structuredClone(object));
    }
    return status;
  }

  /** Sends each subscriber the fields that changed since its last update (`notify_status_update`). */
  private publish(): void {
    for (const [socket, subscription] of this.subscriptions) {
      const now = this.select(subscription.objects);
      const diff: Objects = {};
      for (const [name, fields] of Object.entries(now)) {
        for (const [field, value] of Object.entries(fields)) {
          if (JSON.stringify(subscription.sent[name]?.[field]) === JSON.stringify(value)) continue;
          diff[name] ??= {};
          diff[name][field] = value;
        }
      }
      subscription.sent = structuredClone(now);
      if (Object.keys(diff).length === 0) continue;
      this.send(socket, { jsonrpc: '2.0', method: 'notify_status_update', params: [diff, eventtime()] });
    }
  }

  private notifyAll(method: string, params?: unknown[]): void {
    for (const socket of this.wss.clients) {
      this.send(socket, { jsonrpc: '2.0', method, ...(params ? { params } : {}) });
    }
  }

  private send(socket: WebSocket, message: unknown): void {
    const text = JSON.stringify(message);
    const deliver = () => {
      if (socket.readyState === socket.OPEN) socket.send(text);
    };
    if (this.faults.delayMs > 0) setTimeout(deliver, this.faults.delayMs);
    else deliver();
  }

  private upgrade(request: IncomingMessage, socket: Socket, head: Buffer): void {
    const path = (request.url ?? '').split('?')[0];
    const refusal =
      this.options.websocket === false || path !== '/websocket'
        ? '404 Not Found'
        : this.faults.serverError
          ? '500 Internal Server Error'
          : this.options.apiKey && request.headers['x-api-key'] !== this.options.apiKey
            ? '401 Unauthorized'
            : null;
    if (refusal) {
      socket.end(`HTTP/1.1 ${refusal}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
      return;
    }
    this.wss.handleUpgrade(request, socket, head, (ws) => {
      ws.on('ping', (data) => {
        if (this.faults.delayMs > 0)
          setTimeout(() => ws.readyState === ws.OPEN && ws.pong(data), this.faults.delayMs);
        else ws.pong(data);
      });
      ws.on('close', () => this.subscriptions.delete(ws));
      ws.on('message', (data) => void this.onRpc(ws, data.toString()));
    });
  }

  private async onRpc(socket: WebSocket, text: string): Promise<void> {
    let request: { id?: number; method?: string; params?: Fields };
    try {
      request = JSON.parse(text);
    } catch {
      this.send(socket, { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
      return;
    }
    try {
      const result = await this.call(String(request.method), request.params ?? {}, socket);
      this.send(socket, { jsonrpc: '2.0', result, id: request.id });
    } catch (error) {
      const code = error instanceof RpcError ? error.code : 500;
      this.send(socket, {
        jsonrpc: '2.0',
        error: { code, message: (error as Error).message },
        id: request.id,
      });
    }
  }
}

function idleStats(): Fields {
  return {
    filename: '',
    total_duration: 0,
    print_duration: 0,
    filament_used: 0,
    state: 'standby',
    message: '',
    info: { total_layer: null, current_layer: null },
  };
}

/** Query and body arguments together, the body winning (Moonraker's rule). */
function argsOf(request: FastifyRequest): Fields {
  const body = request.body && typeof request.body === 'object' ? (request.body as Fields) : {};
  return { ...(request.query as Fields), ...body };
}

/**
 * `objects` from a JSON body or JSON-RPC params, or the query-string form
 * `?print_stats&extruder=target,temperature` (an empty value means every field).
 */
function objectsArgument(args: Fields): Record<string, string[] | null> {
  const objects = args['objects'];
  if (objects && typeof objects === 'object') return objects as Record<string, string[] | null>;
  const fromQuery: Record<string, string[] | null> = {};
  for (const [name, value] of Object.entries(args)) {
    fromQuery[name] = typeof value === 'string' && value !== '' ? value.split(',') : null;
  }
  return fromQuery;
}

function fail(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply
    .code(status)
    .header('Content-Type', 'application/json; charset=UTF-8')
    .send(JSON.stringify({ error: { code: status, message } }));
}

function temperatureIn(gcode: string, pattern: RegExp): number | null {
  const match = pattern.exec(gcode);
  return match ? Number(match[1]) : null;
}

function eventtime(): number {
  return Math.round(process.uptime() * 1e6) / 1e6;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
