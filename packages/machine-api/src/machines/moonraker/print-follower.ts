/**
 * Follows one print the service started, from the feed's snapshots, until Klipper's `print_stats` says how
 * it ended. Pure decision logic (no timers, no I/O): the machine feeds it snapshots and the current time.
 */

import type { PrintOutcome } from '../machine.js';
import type { FeedSnapshot } from './feed.js';
import { printStatsOf } from './status.js';

export interface FollowerOptions {
  /** The file as Moonraker stored it (`item.path` of the upload, relative to the gcodes root). */
  filename: string;
  endpoint: string;
  /** How long Moonraker (or Klippy behind it) may be gone before the job is given up as failed. */
  lostGraceMs: number;
  /** How long after the start request the printer may take to report the file as printing. */
  startGraceMs: number;
  startedAt: number;
}

export class PrintFollower {
  private sawPrinting = false;
  private klippyWasDown = false;
  private klippyDownSince: number | null = null;

  constructor(private readonly options: FollowerOptions) {}

  /** The job's outcome once the snapshot decides it, else null (still printing, or waiting within a grace). */
  observe(snapshot: FeedSnapshot, now: number): PrintOutcome | null {
    const { filename, endpoint, lostGraceMs } = this.options;
    const graceSeconds = Math.round(lostGraceMs / 100) / 10;
    if (!snapshot.reachable) {
      const since = snapshot.unreachableSince ?? now;
      if (now - since < lostGraceMs) return null;
      return failed(
        `lost contact with Moonraker at ${endpoint} for more than ${graceSeconds} s while printing ${filename}` +
          `${snapshot.lastError ? ` (${snapshot.lastError})` : ''}; the print's outcome is unknown`,
      );
    }
    if (snapshot.klippyState === 'shutdown' || snapshot.klippyState === 'error') {
      return failed(`Klipper ${snapshot.klippyState}: ${snapshot.klippyMessage || 'no message'}`);
    }
    if (snapshot.klippyState !== 'ready') {
      this.klippyWasDown = true;
      this.klippyDownSince ??= now;
      if (now - this.klippyDownSince < lostGraceMs) return null;
      return failed(`Klipper was not ready for more than ${graceSeconds} s (${snapshot.klippyState})`);
    }
    this.klippyDownSince = null;
    const stats = printStatsOf(snapshot.objects);
    if (!stats) return null;
    if (stats.filename !== filename) {
      if (
        !this.sawPrinting &&
        !this.klippyWasDown &&
        now - this.options.startedAt < this.options.startGraceMs
      ) {
        return null;
      }
      if (this.klippyWasDown) return failed('Klipper restarted during the print; the job was lost');
      if (stats.state === 'printing' || stats.state === 'paused') {
        return failed(`another print (${stats.filename}) replaced this job on the printer`);
      }
      if (!this.sawPrinting) return failed(`the printer did not start ${filename}`);
      return failed(
        `the print was cleared on the printer before it finished (Klipper reports ${stats.state})`,
      );
    }
    switch (stats.state) {
      case 'printing':
      case 'paused':
        this.sawPrinting = true;
        return null;
      // Klipper's count is read here, from the snapshot that ended the print: before any
      // SDCARD_RESET_FILE (a clear) resets `print_stats`.
      case 'complete':
        return withUse({ status: 'completed' }, stats.filamentUsed ?? null);
      case 'cancelled':
        return withUse({ status: 'cancelled' }, stats.filamentUsed ?? null);
      case 'error':
        return withUse(
          failed(stats.message || 'Klipper reported an error without a message'),
          stats.filamentUsed ?? null,
        );
      default:
        return null;
    }
  }
}

function failed(message: string): PrintOutcome {
  return { status: 'failed', message };
}

function withUse(outcome: PrintOutcome, filamentUsed: number | null): PrintOutcome {
  return filamentUsed === null ? outcome : { ...outcome, filamentUsedMm: filamentUsed };
}
