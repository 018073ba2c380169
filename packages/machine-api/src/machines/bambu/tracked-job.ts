/**
 * The job machine-api follows on a Bambu printer (one it sent, or one a killed run sent and this run
 * found again), and how the printer's reports end it: its `gcode_state` and `print_error` decide.
 */

import type { PrintOutcome } from '../machine.js';
import { numberField, type Report, stringField } from './report.js';
import { ACTIVE_GCODE_STATES, formatPrintError } from './status.js';

/** `print_error` the printer reports when a job was cancelled (from its screen, the app or `print.stop`). */
const CANCELLED_BY_USER = 0x0300400c;

export interface TrackedJob {
  /** The `subtask_name` sent in `project_file`. */
  name: string;
  /** `gcode_state` and `print_error` before the job was sent, so a leftover FAILED is not mistaken for ours. */
  before: { gcodeState: string | null; printError: number | null };
  started: boolean;
  stopRequested: boolean;
  settle: (outcome: PrintOutcome) => void;
}

/** A job to follow from the status `before` it, and the promise its end settles (`ended` is told first). */
export function trackJob(
  name: string,
  before: Report,
  started: boolean,
  ended: (job: TrackedJob) => void,
): { tracked: TrackedJob; finished: Promise<PrintOutcome> } {
  let settle: (outcome: PrintOutcome) => void = () => undefined;
  const finished = new Promise<PrintOutcome>((resolve) => {
    settle = resolve;
  });
  const tracked: TrackedJob = {
    name,
    before: {
      gcodeState: stringField(before, 'gcode_state'),
      printError: numberField(before, 'print_error'),
    },
    started,
    stopRequested: false,
    settle: (outcome) => {
      ended(tracked);
      settle(outcome);
    },
  };
  return { tracked, finished };
}

export function isActive(report: Report): boolean {
  const gcodeState = stringField(report, 'gcode_state');
  return gcodeState !== null && ACTIVE_GCODE_STATES.has(gcodeState);
}

/**
 * Whether the report shows the printer on the job named `name` (the `subtask_name` machine-api sent), or
 * showing how it ended: the printer keeps a finished or failed job's state and name until the next job.
 */
export function reportsJob(report: Report, name: string): boolean {
  const gcodeState = stringField(report, 'gcode_state');
  return (
    stringField(report, 'subtask_name') === name &&
    (isActive(report) || gcodeState === 'FINISH' || gcodeState === 'FAILED')
  );
}

/** Moves the tracked job along with the printer's `gcode_state`: started, or settled with how it ended. */
export function followReport(job: TrackedJob, report: Report): void {
  const gcodeState = stringField(report, 'gcode_state');
  const printError = numberField(report, 'print_error');
  if (isActive(report)) {
    job.started = true;
    return;
  }
  // Until the printer has shown our job running, only a change from the state before it counts.
  const changed = gcodeState !== job.before.gcodeState || printError !== job.before.printError;
  if (!job.started && !changed) return;
  if (gcodeState === 'FINISH') job.settle({ status: 'completed' });
  else if (gcodeState === 'FAILED') {
    if (job.stopRequested || printError === CANCELLED_BY_USER) job.settle({ status: 'cancelled' });
    else {
      const code = printError ? `error ${formatPrintError(printError)}` : 'no error code';
      job.settle({ status: 'failed', message: `the printer reported the print FAILED (${code})` });
    }
  } else if (gcodeState === 'IDLE' && job.started) {
    job.settle(
      job.stopRequested
        ? { status: 'cancelled' }
        : { status: 'failed', message: 'the printer went idle without finishing the job' },
    );
  }
}
