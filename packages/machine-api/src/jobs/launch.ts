/**
 * Slicing → uploading → printing of one job whose machine slot is reserved (a direct print or a queued
 * job): every step recorded through the lifecycle, a refusal or a failure recorded (or, for a refused
 * direct print, the job forgotten), and the print followed to its end once the machine has it.
 */

import type { LineScan } from '../design/line-scan.js';
import { Conflict, ServiceError } from '../errors.js';
import type { RegisteredMachine } from '../machines/registry.js';
import { preparePrint } from '../slicer/pipeline.js';
import { estimateFilament, type FilamentSettings, filamentSettings } from './filament.js';
import type { Job, JobStatus } from './job.js';
import { ClaimLost, type JobLifecycle } from './lifecycle.js';
import { filamentIndexFor } from './machine-fit.js';
import type { JobRunnerOptions, JobSpool } from './runner.js';
import { onAbort } from './signals-and-names.js';

export interface LaunchContext {
  options: JobRunnerOptions;
  lifecycle: JobLifecycle;
}

/** How `launch` treats a refusal: a direct print leaves no job, a queued one stays failed for a requeue. */
export interface LaunchOptions {
  /** Aborts when the client of a direct print hangs up before the machine has the job. */
  clientGone?: AbortSignal;
  /** A 4xx refusal removes the job (its client never learnt the id). */
  forgetRefused: boolean;
  /** The upload's line check (see Upload). */
  lines?: LineScan;
}

/** Slicing → uploading → printing of a job whose machine slot is reserved; the flight follows the print. */
export async function launchJob(
  { options: runnerOptions, lifecycle }: LaunchContext,
  job: Job,
  entry: RegisteredMachine,
  designPath: string,
  workDir: string,
  options: LaunchOptions,
): Promise<Job> {
  const { store, machines } = runnerOptions;
  const jobId = job.id;
  const machineId = entry.id;
  const flight = lifecycle.track(jobId, machineId);
  const parameters = job.parameters;
  onAbort(options.clientGone, () => {
    if (flight.handedOver) return;
    flight.cancelReason ??= 'the client disconnected before the job started printing';
    flight.controller.abort();
  });
  try {
    await lifecycle.advance(flight, 'slicing');
    const signal = flight.controller.signal;
    const prepared = await preparePrint({
      uploadPath: designPath,
      fileName: job.fileName,
      format: entry.machine.printFormat,
      prints: machines.prints(entry),
      slicer: entry.common.slicer,
      designs: runnerOptions.designs,
      ...(options.lines ? { scannedLines: options.lines } : {}),
      filamentIndex: filamentIndexFor(job, entry),
      ejectGcode: entry.common.clearing.ejectGcode,
      workDir,
      signal,
    });
    signal.throwIfAborted();
    if (prepared.estimate) await store.setEstimate(jobId, prepared.estimate);
    // The file the machine gets decides the estimate (a queued job's was read from its upload).
    const index = filamentIndexFor(job, entry);
    const spool = runnerOptions.spoolFor?.(entry, index ?? loadedSlot(runnerOptions, entry));
    const filament = estimateFilament(
      prepared.filament,
      spoolSettings(filamentSettings(entry.common.filaments[index ?? 0]), spool),
    );
    if (filament.estimatedG !== null || filament.estimatedM !== null || job.filament === null) {
      await store.setFilament(jobId, filament);
    }
    await lifecycle.advance(flight, 'uploading');
    const active = await entry.machine.print({
      jobId,
      jobName: parameters.job_name,
      filePath: prepared.filePath,
      signal,
    });
    // Cancelled while the machine was starting: it has the job now, so stop it there.
    flight.handedOver = true;
    if (signal.aborted) await entry.machine.stop().catch(() => undefined);
    // GET /machines answers from the observer's snapshot: re-read the machine now, so nobody who
    // has the job's answer sees it idle until the next poll (backends that push would say it soon,
    // a USB printer does not push).
    await runnerOptions.observer.refresh(entry.id).catch(() => undefined);
    const printing = await lifecycle.advance(flight, 'printing');
    void lifecycle.follow(flight, active.finished, workDir);
    return printing;
  } catch (error) {
    const cancelled = flight.controller.signal.aborted;
    // Only a print the machine had started can have left something on the bed.
    await lifecycle.releaseMachine(flight, workDir, flight.handedOver);
    if (error instanceof ClaimLost) {
      // The queue has the job again: it is not this machine's to record.
      lifecycle.settle(flight);
      runnerOptions.logger.warn({ job: jobId, machine: machineId }, error.message);
      throw error;
    }
    if (options.forgetRefused && !cancelled && error instanceof ServiceError && error.statusCode < 500) {
      // Refused (bad design, slicer failure, machine refusal): the answer is the error, not a job.
      try {
        await store.delete(jobId);
      } finally {
        lifecycle.settle(flight);
      }
      throw error;
    }
    const status: JobStatus = cancelled ? 'cancelled' : 'failed';
    const message = cancelled
      ? (flight.cancelReason ?? 'cancelled')
      : lifecycle.describeFailure(error, jobId);
    try {
      await lifecycle.finish(flight, status, message);
    } finally {
      lifecycle.settle(flight);
    }
    if (!cancelled) throw error;
    throw flight.cancelError ?? new Conflict(`job ${jobId} was cancelled before it started printing`);
  }
}

/** The filament slot the machine says is loaded (a Bambu AMS tray), else the configured one. */
function loadedSlot(options: JobRunnerOptions, entry: RegisteredMachine): number | null {
  const reported = options.observer.current(entry.id)?.status.hardware;
  return reported?.loadedFilamentIdx ?? entry.common.loadedFilamentIdx;
}

/** The spool's own figures win over the machine's filament configuration; the job records its id. */
function spoolSettings(
  settings: FilamentSettings,
  spool: JobSpool | undefined,
): FilamentSettings & { spoolId?: number } {
  if (!spool) return settings;
  return {
    material: spool.material ?? settings.material,
    density: spool.density ?? settings.density,
    diameter: spool.diameter ?? settings.diameter,
    pricePerKg: spool.pricePerKg ?? settings.pricePerKg,
    spoolId: spool.id,
  };
}
