/**
 * A virtual Marlin printer on the far end of a `socat` pty pair, so the host side is a real serial port.
 * It speaks Marlin's host protocol as `queue.cpp` does: line numbers and XOR checksums checked, a line error
 * answered `Error:…` + `Resend: <n>` + `ok`, ADVANCED_OK `ok N<n> P<p> B<b>`, `busy: processing`
 * keep-alives, M115 capability report, M155 temperature auto-report, M105. Tests can corrupt a line on the
 * wire, hold an `ok`, raise a firmware `Error:` (the printer then halts until reset), unplug the cable
 * (socat is killed) and plug it back in. Every accepted command is recorded.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSerialPort, ReadlineParser, type SerialPortStream } from '../../src/machines/usb/serial-port.js';

export interface MarlinSimOptions {
  firmwareName?: string;
  machineType?: string;
  uuid?: string;
  /** Reports `Cap:AUTOREPORT_TEMP:1` and honours M155 (default true); otherwise the host must poll M105. */
  autoReportTemp?: boolean;
  /** Answers `ok N<line> P<planner> B<buffer>` (default true). */
  advancedOk?: boolean;
  /** Sends `busy: processing` before the `ok` of every n-th command (0 = only for G28/M109/M190). */
  busyEvery?: number;
}

const PLANNER_SLOTS = 15;
const BUFFER_SLOTS = 3;

export class MarlinSim {
  /** Commands accepted, in order, without line numbers and checksums. */
  readonly commands: string[] = [];
  /** Line numbers the printer asked the host to resend. */
  readonly resendRequests: number[] = [];
  /** Every raw line the host sent, as received (after any injected corruption). */
  readonly rawLines: string[] = [];
  readonly hostPath: string;
  private readonly printerPath: string;
  private socat: ChildProcess | null = null;
  private port: SerialPortStream | null = null;
  private lastLine = 0;
  private halted = false;
  private readonly corruptions = new Set<number>();
  private failure: { atCommand: number; message: string } | null = null;
  private hold: { atCommand: number; release: (() => void) | null } | null = null;
  private lostOk: number | null = null;
  private autoReport: NodeJS.Timeout | null = null;
  private extruder = { current: 21.5, target: 0 };
  private bed = { current: 20.8, target: 0 };

  private constructor(
    private readonly dir: string,
    private readonly options: MarlinSimOptions,
  ) {
    this.hostPath = join(dir, 'host');
    this.printerPath = join(dir, 'printer');
  }

  /** Creates the pty pair and opens the printer end. */
  static async start(options: MarlinSimOptions = {}): Promise<MarlinSim> {
    const sim = new MarlinSim(await mkdtemp(join(tmpdir(), 'marlin-sim-')), options);
    await sim.plugIn();
    return sim;
  }

  /** The cable: (re)creates the pty pair and opens the printer's end. A plugged-in printer starts fresh. */
  async plugIn(): Promise<void> {
    const socat = spawn(
      'socat',
      ['-d', '-d', `pty,raw,echo=0,link=${this.printerPath}`, `pty,raw,echo=0,link=${this.hostPath}`],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    socat.stderr?.on('data', (chunk) => {
      stderr += chunk;
    });
    const spawnError = new Promise<never>((_, reject) =>
      socat.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          error.code === 'ENOENT'
            ? new Error('socat is not installed; install it with: apt-get install -y socat')
            : error,
        ),
      ),
    );
    this.socat = socat;
    const deadline = Date.now() + 10_000;
    while (!existsSync(this.printerPath) || !existsSync(this.hostPath)) {
      if (socat.exitCode !== null) throw new Error(`socat exited: ${stderr}`);
      if (Date.now() > deadline) throw new Error(`socat did not create the pty pair: ${stderr}`);
      await Promise.race([spawnError, new Promise((resolve) => setTimeout(resolve, 20))]);
    }
    this.lastLine = 0;
    this.halted = false;
    const port = await openSerialPort(this.printerPath, 115_200);
    port.on('error', () => undefined);
    port
      .pipe(new ReadlineParser({ delimiter: '\n', encoding: 'latin1' }))
      .on('data', (line: string) => this.receive(line.replace(/\r$/, '')));
    this.port = port;
  }

  /** Pulls the cable: socat dies, both ends of the pty pair go away. */
  async unplug(): Promise<void> {
    this.stopAutoReport();
    const socat = this.socat;
    this.socat = null;
    this.port = null;
    if (!socat || socat.exitCode !== null) return;
    const exited = new Promise((resolve) => socat.once('exit', resolve));
    socat.kill('SIGTERM');
    await exited;
  }

  /** Removes everything the printer holds (process, pty pair, temp dir). */
  async close(): Promise<void> {
    await this.unplug();
    await rm(this.dir, { recursive: true, force: true });
  }

  /** Flips a byte of line `lineNumber` on the wire the next time it arrives (the checksum then fails). */
  corruptLine(lineNumber: number): void {
    this.corruptions.add(lineNumber);
  }

  /** Raises `Error:<message>` when the `atCommand`-th command (1-based, all commands) arrives, then halts. */
  failAtCommand(atCommand: number, message: string): void {
    this.failure = { atCommand, message };
  }

  /** Line noise eats the `ok` of the `atCommand`-th command: the host never sees it. */
  loseOkOf(atCommand: number): void {
    this.lostOk = atCommand;
  }

  /** Withholds the `ok` of the `atCommand`-th command until `release()`. */
  holdAtCommand(atCommand: number): void {
    this.hold = { atCommand, release: null };
  }

  /** Sends the withheld `ok`. */
  release(): void {
    const release = this.hold?.release;
    this.hold = null;
    release?.();
  }

  /** Whether an `ok` is being withheld right now. */
  get holding(): boolean {
    return this.hold?.release != null;
  }

  /** Reboots the firmware (as the reset button does): halt cleared, line numbers forgotten, banner sent. */
  reset(): void {
    this.halted = false;
    this.lastLine = 0;
    this.stopAutoReport();
    this.emit('start', 'echo:Marlin 2.1.2.1', 'echo: Last Updated: 2023-07-12 | Author: (virtual printer)');
  }

  /** Writes raw lines to the host (e.g. `//action:pause`). */
  emit(...lines: string[]): void {
    const port = this.port;
    if (!port?.isOpen) return;
    port.write(Buffer.from(lines.map((line) => `${line}\n`).join(''), 'latin1'));
  }

  private receive(received: string): void {
    if (this.halted || received.trim() === '') return;
    let line = received.trimStart();
    const numbered = /^N(\d+)\s/.exec(line);
    if (numbered && this.corruptions.delete(Number(numbered[1]))) {
      // Line noise: one bit of the G-code flips, so the checksum no longer matches.
      const at = line.indexOf(' ') + 1;
      line = line.slice(0, at) + String.fromCharCode(line.charCodeAt(at) ^ 0x04) + line.slice(at + 1);
    }
    this.rawLines.push(line);
    const accepted = this.validate(line);
    if (typeof accepted === 'string') this.lineError(accepted);
    else this.execute(accepted.command, accepted.lineNumber);
  }

  /** Marlin's checks of a numbered line; the error text when it fails. */
  private validate(line: string): { command: string; lineNumber: number | null } | string {
    if (!line.startsWith('N')) return { command: line, lineNumber: null };
    const isM110 = line.includes('M110');
    const numberMatch = (isM110 && /M110\s*N(-?\d+)/.exec(line)) || /^N(\d+)/.exec(line);
    const gcodeN = Number(numberMatch?.[1]);
    if (gcodeN !== this.lastLine + 1 && !isM110) return 'Line Number is not Last Line Number+1';
    const star = line.lastIndexOf('*');
    if (star === -1) return 'No Checksum with line number';
    let sum = 0;
    for (let i = 0; i < star; i++) sum ^= line.charCodeAt(i);
    if (Number(line.slice(star + 1)) !== sum) return 'checksum mismatch';
    this.lastLine = gcodeN;
    return {
      command: line.slice(line.indexOf(' ') + 1, star).trim(),
      lineNumber: Number(/^N(\d+)/.exec(line)?.[1]),
    };
  }

  private lineError(message: string): void {
    this.resendRequests.push(this.lastLine + 1);
    this.emit(`Error:${message}, Last Line: ${this.lastLine}`, `Resend: ${this.lastLine + 1}`, 'ok');
  }

  private execute(command: string, lineNumber: number | null): void {
    this.commands.push(command);
    const count = this.commands.length;
    if (this.failure?.atCommand === count) {
      const { message } = this.failure;
      this.failure = null;
      this.halted = true;
      this.stopAutoReport();
      this.emit(`Error:${message}`, 'Error:Printer halted. kill() called!');
      return;
    }
    const replies = this.respond(command);
    const busyEvery = this.options.busyEvery ?? 0;
    if (/^(G28|M109|M190)\b/.test(command) || (busyEvery > 0 && count % busyEvery === 0)) {
      replies.unshift('busy: processing');
    }
    const ok = this.ok(lineNumber, /^M105\b/.test(command) ? ` ${this.temperatureReport()}` : '');
    const answer = () => setImmediate(() => this.emit(...replies, ok));
    if (this.lostOk === count) {
      this.lostOk = null;
      setImmediate(() => this.emit(...replies));
    } else if (this.hold?.atCommand === count) this.hold.release = answer;
    else answer();
  }

  private ok(lineNumber: number | null, suffix: string): string {
    if (this.options.advancedOk === false) return `ok${suffix}`;
    const n = lineNumber === null ? '' : ` N${lineNumber}`;
    return `ok${n} P${PLANNER_SLOTS} B${BUFFER_SLOTS}${suffix}`;
  }

  private respond(command: string): string[] {
    const [word = '', ...rest] = command.split(/\s+/);
    const param = (letter: string) => {
      const found = rest.find((part) => part.startsWith(letter));
      return found === undefined ? undefined : Number(found.slice(1));
    };
    switch (word) {
      case 'M115':
        return [
          `FIRMWARE_NAME:${this.options.firmwareName ?? 'Marlin 2.1.2.1 (Jul 12 2023 12:00:00)'} ` +
            'SOURCE_CODE_URL:github.com/MarlinFirmware/Marlin PROTOCOL_VERSION:1.0 ' +
            `MACHINE_TYPE:${this.options.machineType ?? 'Virtual Ender'} EXTRUDER_COUNT:1 ` +
            `UUID:${this.options.uuid ?? 'cede2a2f-41a2-4748-9b12-c55c62f367ff'}`,
          `Cap:AUTOREPORT_TEMP:${this.options.autoReportTemp === false ? 0 : 1}`,
          'Cap:EEPROM:1',
          'Cap:HOST_ACTION_COMMANDS:1',
        ];
      case 'M155': {
        this.stopAutoReport();
        const seconds = param('S') ?? 0;
        if (this.options.autoReportTemp !== false && seconds > 0) {
          this.autoReport = setInterval(() => this.emit(` ${this.temperatureReport()}`), seconds * 1000);
        }
        return [];
      }
      case 'M104':
      case 'M109':
        this.extruder = { current: param('S') || 21.5, target: param('S') ?? 0 };
        return word === 'M109' ? [` ${this.temperatureReport()} W:?`] : [];
      case 'M140':
      case 'M190':
        this.bed = { current: param('S') || 20.8, target: param('S') ?? 0 };
        return word === 'M190' ? [` ${this.temperatureReport()}`] : [];
      default:
        return [];
    }
  }

  private temperatureReport(): string {
    const { extruder, bed } = this;
    return (
      `T:${extruder.current.toFixed(2)} /${extruder.target.toFixed(2)} ` +
      `B:${bed.current.toFixed(2)} /${bed.target.toFixed(2)} @:0 B@:0`
    );
  }

  private stopAutoReport(): void {
    if (this.autoReport) clearInterval(this.autoReport);
    this.autoReport = null;
  }
}
