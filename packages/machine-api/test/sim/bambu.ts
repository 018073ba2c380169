/**
 * An in-process Bambu Lab printer in LAN mode, speaking the printer's protocols over real sockets:
 * - MQTT 3.1.1 on TLS (aedes behind a `tls` server with a certificate generated here), login `bblp` + access
 *   code, status on `device/<serial>/report`, commands on `device/<serial>/request`;
 * - implicit FTPS (ftp-srv, passive mode) for uploads to its "SD card" (a temp directory);
 * - SSDP-style `NOTIFY * HTTP/1.1` announcements over UDP.
 * A printer loop walks an accepted job through PREPARE → RUNNING → FINISH, publishing full reports (X1
 * style) or only what changed (P1/A1 style). Fault switches break it in the ways real printers break.
 */

import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import type { Aedes } from 'aedes';
import { unzipSync, zipSync } from 'fflate';
import { FileSystem, FtpSrv } from 'ftp-srv';
import pino from 'pino';
import { generate } from 'selfsigned';

type Report = Record<string, unknown>;

export interface BambuSimOptions {
  serial?: string;
  name?: string;
  /** `DevModel.bambu.com`, e.g. `BL-P001` (X1 Carbon), `C12` (P1S). */
  modelCode?: string;
  accessCode?: string;
  /** `full`: every report is the whole status (X1). `delta`: only changed fields (P1/A1). */
  reportMode?: 'full' | 'delta';
  /** Interval of the printer loop. */
  tickMs?: number;
  /** Loop ticks a job spends RUNNING from 0 to 100 %. */
  printTicks?: number;
}

/** Switches a test flips to make the printer misbehave. */
export interface BambuSimFaults {
  /** Drop `print.*` commands without replying or acting on them. */
  neverAcknowledge: boolean;
  /** Echo `sequence_id` as a string, as some firmware does. */
  stringSequenceIds: boolean;
  /** Refuse every upload (`550 SD card is full`). */
  rejectUploads: boolean;
  /** When a job reaches this percentage, it fails with `failErrorCode`. */
  failAtPercent: number | null;
  failErrorCode: number;
  /** Publish nothing at all (a hung printer whose broker still holds the connection). */
  silent: boolean;
  /**
   * Authorization Control firmware (2025) outside LAN-only Developer Mode: every `print.*` command is
   * answered `result: "failed"`, `reason: "mqtt message verify failed"`, `err_code: 84033543` and not
   * acted on; status reports go on.
   */
  authorizationControl: boolean;
}

const CANCELLED_ERROR = 0x0300400c;

export class BambuPrinterSim {
  readonly serial: string;
  readonly name: string;
  readonly modelCode: string;
  /** The code the printer accepts; change it to simulate a reset of the access code. */
  accessCode: string;
  readonly faults: BambuSimFaults = {
    neverAcknowledge: false,
    stringSequenceIds: false,
    rejectUploads: false,
    failAtPercent: null,
    failErrorCode: 0x07008011,
    silent: false,
    authorizationControl: false,
  };
  /** Every command received on the request topic, in order. */
  readonly commands: Report[] = [];
  /** Successful MQTT logins, and refused ones. */
  logins = 0;
  refusedLogins = 0;
  /** Subscriptions to the report topic (one per connection when the client resubscribes). */
  subscriptions = 0;
  /** The printer's current full status. */
  status: Report;
  reportMode: 'full' | 'delta';

  private readonly tickMs: number;
  private readonly printTicks: number;
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly extraSignalListeners: {
    signal: NodeJS.Signals;
    listener: (...args: unknown[]) => void;
  }[] = [];
  private pendingDelta: Report = {};
  private prepareTicks = 0;
  private runningTicks = 0;
  private reportSequence = 0;
  private udp: UdpSocket | null = null;

  private constructor(
    options: BambuSimOptions,
    private readonly broker: Aedes,
    private readonly mqttServer: TlsServer,
    private readonly ftpServer: FtpSrv,
    readonly sdCard: string,
  ) {
    this.serial = options.serial ?? '00M09A350100123';
    this.name = options.name ?? 'Workshop X1C';
    this.modelCode = options.modelCode ?? 'BL-P001';
    this.accessCode = options.accessCode ?? '12345678';
    this.reportMode = options.reportMode ?? 'full';
    this.tickMs = options.tickMs ?? 50;
    this.printTicks = options.printTicks ?? 10;
    this.status = idleStatus();
  }

  /** Starts the MQTT and FTPS servers on ephemeral ports of 127.0.0.1 and the printer loop. */
  static async start(options: BambuSimOptions = {}): Promise<BambuPrinterSim> {
    const pems = await generate([{ name: 'commonName', value: options.serial ?? '00M09A350100123' }], {
      keySize: 2048,
      algorithm: 'sha256',
    });
    const tls = { key: pems.private, cert: pems.cert };
    const { Aedes } = await import('aedes');
    const broker = await Aedes.createBroker();
    const mqttServer = createTlsServer(tls, broker.handle);
    const sdCard = await mkdtemp(join(tmpdir(), 'bambu-sd-'));

    const signals: NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGQUIT'];
    const before = new Map(signals.map((signal) => [signal, new Set(process.listeners(signal))]));
    const pasvMin = 20_000 + Math.floor(Math.random() * 40_000);
    const ftpServer = new FtpSrv({
      url: 'ftps://127.0.0.1:0',
      tls,
      pasv_url: '127.0.0.1',
      pasv_min: pasvMin,
      pasv_max: pasvMin + 200,
      greeting: 'Bambu printer simulator',
      log: pino({ level: 'silent' }),
    });
    const sim = new BambuPrinterSim(options, broker, mqttServer, ftpServer, sdCard);
    // ftp-srv installs process signal handlers per server; remember them so close() can remove them.
    for (const signal of signals) {
      for (const listener of process.listeners(signal)) {
        if (!before.get(signal)?.has(listener)) {
          sim.extraSignalListeners.push({ signal, listener: listener as (...args: unknown[]) => void });
        }
      }
    }
    sim.wireBroker();
    sim.wireFtp();
    mqttServer.on('secureConnection', (socket) => {
      sim.sockets.add(socket);
      socket.on('close', () => sim.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => mqttServer.listen(0, '127.0.0.1', resolve));
    await ftpServer.listen();
    sim.every(sim.tickMs, () => sim.tick());
    return sim;
  }

  /**
   * The `[machines.<id>]` table that configures machine-api for this printer by address and serial
   * (no discovery), followed by `extraKeys` (more keys of the same table).
   */
  machineToml(id: string, extraKeys = ''): string {
    return `
[machines.${id}]
type = "Bambu"
name = "${this.name}"
access_code = "${this.accessCode}"
host = "127.0.0.1"
serial = "${this.serial}"
mqtt_port = ${this.mqttPort}
ftps_port = ${this.ftpsPort}
${extraKeys}`;
  }

  get mqttPort(): number {
    const address = this.mqttServer.address();
    if (!address || typeof address === 'string') throw new Error('MQTT server is not listening');
    return address.port;
  }

  get ftpsPort(): number {
    const address = (this.ftpServer as unknown as { server: TlsServer }).server.address();
    if (!address || typeof address === 'string') throw new Error('FTPS server is not listening');
    return address.port;
  }

  get reportTopic(): string {
    return `device/${this.serial}/report`;
  }

  /** The announcement a real printer broadcasts every few seconds. */
  announcement(host = '127.0.0.1'): string {
    return [
      'NOTIFY * HTTP/1.1',
      'HOST: 239.255.255.250:1990',
      'Server: UPnP/1.0',
      `Location: ${host}`,
      'NT: urn:bambulab-com:device:3dprinter:1',
      `USN: ${this.serial}`,
      'Cache-Control: max-age=1800',
      `DevModel.bambu.com: ${this.modelCode}`,
      `DevName.bambu.com: ${this.name}`,
      'DevSignal.bambu.com: -44',
      'DevConnect.bambu.com: lan',
      'DevBind.bambu.com: free',
      'Devseclink.bambu.com: secure',
      'DevVersion.bambu.com: 01.08.02.00',
      '',
      '',
    ].join('\r\n');
  }

  /** Sends one datagram to 127.0.0.1:`port`. */
  async sendDatagram(port: number, payload: string | Buffer): Promise<void> {
    if (!this.udp) this.udp = createSocket('udp4');
    const udp = this.udp;
    await new Promise<void>((resolve, reject) =>
      udp.send(payload, port, '127.0.0.1', (e) => (e ? reject(e) : resolve())),
    );
  }

  /** Announces the printer to 127.0.0.1:`port` now and then every `intervalMs`, until close(). */
  announceTo(port: number, intervalMs = 200): void {
    const announce = () => void this.sendDatagram(port, this.announcement()).catch(() => undefined);
    announce();
    this.every(intervalMs, announce);
  }

  /** Cuts every MQTT connection, as a Wi-Fi drop or a printer reboot does. */
  dropConnections(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  /** Changes fields of the status (e.g. a temperature) and reports the change. */
  update(fields: Report): void {
    this.change(fields);
    this.publishReport();
  }

  /** Starts a job from the printer's own screen (a file already on its SD card), not through the service. */
  startLocalJob(subtaskName: string): void {
    this.beginJob(subtaskName, `${subtaskName}.gcode.3mf`, 50);
  }

  /** Stops everything and removes the SD card directory. */
  async close(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    this.timers.clear();
    this.udp?.close();
    this.udp = null;
    this.dropConnections();
    await new Promise<void>((resolve) => this.mqttServer.close(() => resolve()));
    await new Promise<void>((resolve) => this.broker.close(() => resolve()));
    await this.ftpServer.close();
    for (const { signal, listener } of this.extraSignalListeners) process.removeListener(signal, listener);
    await rm(this.sdCard, { recursive: true, force: true });
  }

  private every(ms: number, run: () => void): void {
    this.timers.add(setInterval(run, ms));
  }

  private wireBroker(): void {
    this.broker.authenticate = (_client, username, password, done) => {
      if (username === 'bblp' && password?.toString('utf8') === this.accessCode) {
        this.logins += 1;
        done(null, true);
        return;
      }
      this.refusedLogins += 1;
      // What the printer's broker answers to a wrong access code: CONNACK 5, not authorized.
      done(Object.assign(new Error('not authorized'), { returnCode: 5 }), false);
    };
    this.broker.authorizeSubscribe = (_client, subscription, callback) => {
      if (subscription.topic !== this.reportTopic) {
        callback(new Error(`subscription to ${subscription.topic} refused`));
        return;
      }
      this.subscriptions += 1;
      callback(null, subscription);
    };
    this.broker.authorizePublish = (client, packet, callback) => {
      if (client && packet.topic !== `device/${this.serial}/request`) {
        callback(new Error(`publishing to ${packet.topic} refused`));
        return;
      }
      callback(null);
    };
    this.broker.on('publish', (packet, client) => {
      if (!client || packet.topic !== `device/${this.serial}/request`) return;
      let message: unknown;
      try {
        message = JSON.parse(packet.payload.toString());
      } catch {
        return; // the real printer ignores what it cannot parse
      }
      if (typeof message === 'object' && message !== null) this.onCommand(message as Report);
    });
  }

  private wireFtp(): void {
    const sim = this;
    class SdCard extends FileSystem {
      override write(fileName: string, options?: { append?: boolean; start?: unknown }) {
        if (sim.faults.rejectUploads) throw new Error('SD card is full'); // ftp-srv answers 550 + message
        return super.write(fileName, options);
      }
    }
    this.ftpServer.on('login', ({ connection, username, password }, resolve, reject) => {
      if (username !== 'bblp' || password !== this.accessCode) {
        reject(new Error('Login incorrect'));
        return;
      }
      resolve({ fs: new SdCard(connection, { root: this.sdCard, cwd: '/' }) });
    });
  }

  private onCommand(message: Report): void {
    this.commands.push(message);
    const pushing = message.pushing as Report | undefined;
    if (pushing?.command === 'pushall') {
      this.publish({
        print: { ...this.status, command: 'push_status', msg: 0, sequence_id: this.nextReportId() },
      });
      return;
    }
    const print = message.print as Report | undefined;
    if (!print || this.faults.neverAcknowledge) return;
    if (this.faults.authorizationControl) {
      this.reply(print, { result: 'failed', reason: 'mqtt message verify failed', err_code: 84033543 });
      return;
    }
    switch (print.command) {
      case 'project_file':
        void this.startProject(print);
        return;
      case 'pause':
        if (!['PREPARE', 'RUNNING'].includes(String(this.status.gcode_state))) {
          this.reply(print, { result: 'fail', reason: 'not printing' });
          return;
        }
        this.reply(print, { result: 'success', reason: '' });
        this.update({ gcode_state: 'PAUSE', stg_cur: 16 });
        return;
      case 'resume':
        if (this.status.gcode_state !== 'PAUSE') {
          this.reply(print, { result: 'fail', reason: 'not paused' });
          return;
        }
        this.reply(print, { result: 'success', reason: '' });
        this.update({ gcode_state: 'RUNNING', stg_cur: 0 });
        return;
      case 'gcode_line':
        this.runGcode(print);
        return;
      case 'stop':
        this.reply(print, { result: 'success', reason: '' });
        if (['PREPARE', 'RUNNING', 'PAUSE'].includes(String(this.status.gcode_state))) {
          this.update({ ...coolDown(), gcode_state: 'FAILED', print_error: CANCELLED_ERROR, stg_cur: -1 });
        }
        return;
    }
  }

  /** `print.gcode_line`: the heater commands change the reported targets; other lines are accepted as they are. */
  private runGcode(command: Report): void {
    const change: Report = {};
    for (const line of String(command.param ?? '').split('\n')) {
      const match = /^M1(04|40)\s+S(\d+(?:\.\d+)?)/.exec(line.trim().toUpperCase());
      if (match) change[match[1] === '04' ? 'nozzle_target_temper' : 'bed_target_temper'] = Number(match[2]);
    }
    this.reply(command, { result: 'success', reason: '', param: command.param });
    if (Object.keys(change).length > 0) this.update(change);
  }

  /** Checks the project the way the printer does (file on the card, plate G-code inside) and starts it. */
  private async startProject(command: Report): Promise<void> {
    const url = String(command.url ?? '');
    const fileName = url.replace(/^ftp:\/\/\/?/, '').replace(/^\/?(sdcard\/)?/, '');
    let plate: Uint8Array | undefined;
    try {
      const archive = unzipSync(new Uint8Array(await readFile(join(this.sdCard, fileName))));
      plate = archive[String(command.param ?? '')];
    } catch {
      plate = undefined;
    }
    if (!plate) {
      this.reply(command, { result: 'fail', reason: `cannot open ${command.param} in ${url}` });
      return;
    }
    this.reply(command, {
      result: 'success',
      reason: '',
      param: command.param,
      subtask_name: command.subtask_name,
      url,
      profile_id: '0',
      project_id: '0',
      subtask_id: '0',
      task_id: '0',
    });
    const layers = new TextDecoder().decode(plate).match(/^;LAYER_CHANGE/gm)?.length ?? 1;
    this.beginJob(String(command.subtask_name), fileName, layers);
  }

  private beginJob(subtaskName: string, fileName: string, layers: number): void {
    this.prepareTicks = 0;
    this.runningTicks = 0;
    this.update({
      gcode_state: 'PREPARE',
      stg_cur: 2,
      print_type: 'local',
      subtask_name: subtaskName,
      gcode_file: fileName,
      mc_percent: 0,
      layer_num: 0,
      total_layer_num: layers,
      mc_remaining_time: this.printTicks,
      print_error: 0,
      bed_target_temper: 55,
      nozzle_target_temper: 220,
    });
  }

  private reply(command: Report, fields: Report): void {
    const sequenceId = this.faults.stringSequenceIds ? String(command.sequence_id) : command.sequence_id;
    this.publish({ print: { command: command.command, sequence_id: sequenceId, ...fields } });
  }

  /** One step of the printer loop: heat, print, fail or finish; report what changed. */
  private tick(): void {
    const state = this.status.gcode_state;
    if (state === 'PREPARE') {
      this.prepareTicks += 1;
      const stages = [2, 7, 1, 14];
      this.change({
        stg_cur: stages[Math.min(this.prepareTicks, stages.length - 1)],
        bed_temper: Math.min(55, 24 + this.prepareTicks * 10),
        nozzle_temper: Math.min(220, 25 + this.prepareTicks * 60),
      });
      if (this.prepareTicks >= stages.length) this.change({ gcode_state: 'RUNNING', stg_cur: 0 });
    } else if (state === 'RUNNING') {
      this.runningTicks += 1;
      const percent = Math.min(100, Math.floor((this.runningTicks * 100) / this.printTicks));
      const total = Number(this.status.total_layer_num);
      this.change({
        mc_percent: percent,
        layer_num: Math.max(1, Math.round((total * percent) / 100)),
        mc_remaining_time: Math.max(0, Math.round(((100 - percent) * this.printTicks) / 100)),
        bed_temper: 55,
        nozzle_temper: 220,
        chamber_temper: Math.min(35, Number(this.status.chamber_temper) + 1),
      });
      this.useFilament();
      const failAt = this.faults.failAtPercent;
      if (failAt !== null && percent >= failAt) {
        this.change({
          ...coolDown(),
          gcode_state: 'FAILED',
          print_error: this.faults.failErrorCode,
          stg_cur: -1,
        });
      } else if (percent >= 100) {
        this.change({ ...coolDown(), gcode_state: 'FINISH', stg_cur: -1 });
      }
    }
    if (this.reportMode === 'full' || Object.keys(this.pendingDelta).length > 0) this.publishReport();
  }

  /** The loaded AMS tray loses filament; P1 printers report only that tray, inside a one-unit list. */
  private useFilament(): void {
    const ams = this.status.ams as { ams: { id: string; tray: { id: string; remain: number }[] }[] };
    const tray = ams.ams[0]?.tray[0];
    if (!tray || tray.remain <= 0) return;
    tray.remain -= 1;
    this.pendingDelta.ams = { ams: [{ id: '0', tray: [{ id: '0', remain: tray.remain }] }] };
  }

  private change(fields: Report): void {
    Object.assign(this.status, fields);
    Object.assign(this.pendingDelta, fields);
  }

  private publishReport(): void {
    const body = this.reportMode === 'full' ? this.status : this.pendingDelta;
    this.pendingDelta = {};
    this.publish({
      print: {
        ...body,
        command: 'push_status',
        msg: this.reportMode === 'full' ? 0 : 1,
        sequence_id: this.nextReportId(),
      },
    });
  }

  private nextReportId(): string {
    this.reportSequence += 1;
    return String(this.reportSequence);
  }

  private publish(message: Report): void {
    if (this.faults.silent) return;
    this.broker.publish(
      {
        cmd: 'publish',
        topic: this.reportTopic,
        payload: Buffer.from(JSON.stringify(message)),
        qos: 0,
        retain: false,
        dup: false,
      },
      () => undefined,
    );
  }
}

function coolDown(): Report {
  return { bed_target_temper: 0, nozzle_target_temper: 0 };
}

/** What an idle X1 Carbon with one AMS reports (trimmed of camera, upgrade and xcam sections). */
function idleStatus(): Report {
  return {
    ams: {
      ams: [
        {
          id: '0',
          humidity: '4',
          temp: '24.1',
          tray: [
            {
              id: '0',
              tray_type: 'PLA',
              tray_sub_brands: 'PLA Basic',
              tray_color: 'FF6A13FF',
              remain: 78,
              tray_diameter: '1.75',
            },
            {
              id: '1',
              tray_type: 'PETG',
              tray_sub_brands: 'PETG HF',
              tray_color: '000000FF',
              remain: 40,
              tray_diameter: '1.75',
            },
            { id: '2' },
            {
              id: '3',
              tray_type: 'PLA-S',
              tray_sub_brands: 'Support for PLA',
              tray_color: 'FFFFFFFF',
              remain: -1,
              tray_diameter: '1.75',
            },
          ],
        },
      ],
      ams_exist_bits: '1',
      tray_exist_bits: 'b',
      tray_now: '0',
      tray_tar: '0',
      version: 4,
    },
    vt_tray: { id: '254', tray_type: '', tray_color: '00000000' },
    bed_temper: 24.5,
    bed_target_temper: 0,
    chamber_temper: 26,
    nozzle_temper: 25.1,
    nozzle_target_temper: 0,
    cooling_fan_speed: '0',
    big_fan1_speed: '0',
    big_fan2_speed: '0',
    heatbreak_fan_speed: '0',
    gcode_file: '',
    gcode_state: 'IDLE',
    hms: [],
    layer_num: 0,
    total_layer_num: 0,
    lifecycle: 'product',
    mc_percent: 0,
    mc_print_stage: '1',
    mc_remaining_time: 0,
    nozzle_diameter: '0.4',
    nozzle_type: 'hardened_steel',
    print_error: 0,
    print_type: 'idle',
    project_id: '0',
    profile_id: '0',
    sdcard: true,
    spd_lvl: 2,
    spd_mag: 100,
    stg: [],
    stg_cur: -1,
    subtask_id: '0',
    subtask_name: '',
    task_id: '0',
    wifi_signal: '-44dBm',
    lights_report: [{ node: 'chamber_light', mode: 'on' }],
    upload: { status: 'idle', progress: 0, message: '' },
    online: { ahb: false, rfid: false, version: 7 },
  };
}

/**
 * Writes a minimal Bambu project (`.gcode.3mf`): the plate G-code under `Metadata/plate_1.gcode` with its MD5,
 * as the printer expects, plus the OPC parts every 3MF has.
 */
export async function writeProjectFile(path: string, layers = 5): Promise<void> {
  const gcode = [
    '; HEADER_BLOCK_START',
    `; total layer number: ${layers}`,
    '; HEADER_BLOCK_END',
    'G28',
    ...Array.from(
      { length: layers },
      (_, layer) => `;LAYER_CHANGE\n;Z:${(layer + 1) * 0.2}\nG1 Z${(layer + 1) * 0.2} F600\nG1 X10 Y10 E1`,
    ),
    'M104 S0',
    '',
  ].join('\n');
  const encoder = new TextEncoder();
  const { createHash } = await import('node:crypto');
  const archive = zipSync({
    '[Content_Types].xml': encoder.encode(
      '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="model" ContentType="application/vnd.ms-package.3dmanufacturing-3dmodel+xml"/><Default Extension="gcode" ContentType="text/x.gcode"/></Types>',
    ),
    '_rels/.rels': encoder.encode(
      '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Target="/3D/3dmodel.model" Id="rel-1" Type="http://schemas.microsoft.com/3dmanufacturing/2013/01/3dmodel"/></Relationships>',
    ),
    '3D/3dmodel.model': encoder.encode(
      '<?xml version="1.0" encoding="UTF-8"?><model unit="millimeter" xmlns="http://schemas.microsoft.com/3dmanufacturing/core/2015/02"><resources/><build/></model>',
    ),
    'Metadata/plate_1.gcode': encoder.encode(gcode),
    'Metadata/plate_1.gcode.md5': encoder.encode(createHash('md5').update(gcode).digest('hex')),
  });
  await writeFile(path, archive);
}

/** A UDP port that was free a moment ago (for the discovery listener, which binds a configured port). */
export async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}
