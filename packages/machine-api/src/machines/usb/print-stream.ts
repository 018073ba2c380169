/**
 * Streams one G-code file to the printer through a `MarlinConnection`, with pause, resume and cancel.
 * Pausing stops streaming once the line in flight is acknowledged (heaters and motors stay on, so the print
 * can continue); cancelling stops streaming and then sends the safe end G-code.
 */

import type { Logger } from 'pino';
import type { PrintOutcome } from '../machine.js';
import { readGcodeCommands } from './gcode-file.js';
import type { MarlinConnection } from './marlin-connection.js';

/** Sent after a cancel: hotend and bed heaters off, part fan off, steppers off. */
export const SAFE_END_GCODE = ['M104 S0', 'M140 S0', 'M107', 'M84'];

export class PrintStream {
  private acknowledgedBytes = 0;
  private paused = false;
  private cancelled = false;
  private wake: (() => void) | null = null;

  constructor(
    private readonly connection: MarlinConnection,
    private readonly filePath: string,
    private readonly fileBytes: number,
    private readonly logger: Logger,
  ) {}

  /** Percent of the file's bytes the firmware has acknowledged. */
  get progress(): number {
    return this.fileBytes === 0 ? 100 : (this.acknowledgedBytes / this.fileBytes) * 100;
  }

  get isPaused(): boolean {
    return this.paused && !this.cancelled;
  }

  /** Streams the whole file; never rejects. */
  async run(): Promise<PrintOutcome> {
    try {
      for await (const { command, doneOffset } of readGcodeCommands(this.filePath)) {
        await this.holdWhilePaused();
        if (this.cancelled) break;
        await this.connection.send(command);
        this.acknowledgedBytes = doneOffset;
      }
    } catch (error) {
      // A firmware `Error:` carries the printer's own words; a lost port or silence says what happened.
      return { status: 'failed', message: error instanceof Error ? error.message : String(error) };
    }
    if (!this.cancelled) return { status: 'completed' };
    await this.sendEndGcode();
    return { status: 'cancelled' };
  }

  /** Stops streaming after the line in flight. */
  pause(): void {
    this.paused = true;
  }

  /** Continues streaming after a pause. */
  resume(): void {
    this.paused = false;
    this.wake?.();
  }

  /** Stops streaming for good; `run` then sends the safe end G-code and reports `cancelled`. */
  cancel(): void {
    this.cancelled = true;
    this.wake?.();
  }

  private async holdWhilePaused(): Promise<void> {
    while (this.paused && !this.cancelled) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = null;
    }
  }

  private async sendEndGcode(): Promise<void> {
    try {
      for (const command of SAFE_END_GCODE) await this.connection.send(command);
    } catch (error) {
      this.logger.warn({ err: error }, 'could not send the end G-code after cancelling');
    }
  }
}
