/**
 * Pure conversions from the event stream's wire shapes (the `Job` of `job.updated`, the `MachineState` of
 * `machine.state`) to what a notification says. Pure so that the words of every message are tested
 * without a service.
 */

import type { JobFacts, NotificationData, NotifyEvent } from './events.js';

/** The fields of the `Job` wire shape a notification reads. */
export interface WireJob {
  id: string;
  machine_id: string | null;
  job_name: string;
  file_name: string;
  status: string;
  message: string | null;
  progress: number | null;
  created_at: string;
  finished_at: string | null;
  dispatched_at: string | null;
  queued_at: string | null;
  estimate: { filament_used_g: number | null; filament_used_mm: number | null } | null;
}

export function jobFacts(job: WireJob, now = Date.now()): JobFacts {
  const from = Date.parse(job.dispatched_at ?? job.created_at);
  const to = job.finished_at ? Date.parse(job.finished_at) : now;
  return {
    id: job.id,
    name: job.job_name,
    file_name: job.file_name,
    status: job.status,
    machine_id: job.machine_id,
    progress: job.progress,
    duration_seconds: Number.isFinite(from) ? Math.max(0, Math.round((to - from) / 1000)) : null,
    message: job.message,
    material: job.estimate
      ? { filament_used_g: job.estimate.filament_used_g, filament_used_mm: job.estimate.filament_used_mm }
      : null,
  };
}

/** Minutes or hours and minutes, for messages: `1 h 05 min`, `42 min`, `30 s`. */
export function humanDuration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}

/** The title and message of a job notification. */
export function jobNotification(event: NotifyEvent, job: JobFacts): NotificationData {
  const on = job.machine_id ? ` on ${job.machine_id}` : '';
  const took = job.duration_seconds !== null ? ` after ${humanDuration(job.duration_seconds)}` : '';
  const material =
    job.material?.filament_used_g != null ? `, ${job.material.filament_used_g.toFixed(1)} g of filament` : '';
  const texts: Partial<Record<NotifyEvent, [string, string]>> = {
    'job.started': [`Started: ${job.name}`, `${job.name} (${job.file_name}) started printing${on}.`],
    'job.completed': [
      `Completed: ${job.name}`,
      `${job.name} (${job.file_name}) completed${on}${took}${material}.`,
    ],
    'job.failed': [
      `Failed: ${job.name}`,
      `${job.name} (${job.file_name}) failed${on}${took}${job.message ? `: ${job.message}` : '.'}`,
    ],
    'job.cancelled': [
      `Cancelled: ${job.name}`,
      `${job.name} (${job.file_name}) was cancelled${on}${took}${job.message ? `: ${job.message}` : '.'}`,
    ],
    'job.paused': [
      `Paused: ${job.name}`,
      `${job.name} (${job.file_name}) is paused${on}${job.progress !== null ? ` at ${Math.round(job.progress)} %` : ''}.`,
    ],
    'queue.waiting': [
      `Waiting: ${job.name}`,
      `${job.name} (${job.file_name}) has waited in the queue for ${humanDuration(job.duration_seconds ?? 0)}; no matching machine was ready.`,
    ],
    'queue.unroutable': [
      `No machine for: ${job.name}`,
      `${job.name} (${job.file_name}) waits in the queue, but no configured machine can take it any more.`,
    ],
  };
  const [title, message] = texts[event] ?? [job.name, `${event}: ${job.name}`];
  return { title, message, machine: job.machine_id ? { id: job.machine_id } : null, job };
}

/** The title and message of a machine notification; `detail` is the printer's own message, if any. */
export function machineNotification(
  event: NotifyEvent,
  machineId: string,
  detail: string | null,
  since?: string,
): NotificationData {
  const texts: Partial<Record<NotifyEvent, [string, string]>> = {
    'machine.failed': [
      `${machineId} failed`,
      `${machineId} reports a failure${detail ? `: ${detail}` : '.'}`,
    ],
    'machine.offline': [`${machineId} is offline`, `${machineId} stopped answering.`],
    'machine.online': [`${machineId} is back online`, `${machineId} answers again.`],
    'machine.awaiting_clear': [
      `${machineId} awaits a clear bed`,
      `The bed of ${machineId} has waited to be cleared since ${since ?? 'a while'}; confirm with POST /machines/${machineId}/clear.`,
    ],
  };
  const [title, message] = texts[event] ?? [machineId, `${event}: ${machineId}`];
  return { title, message, machine: { id: machineId }, job: null };
}

/** The message of `POST /notifications/targets/{id}/test`. */
export function testNotification(targetName: string): NotificationData {
  return {
    title: 'Test notification',
    message: `This is a test of the notification target "${targetName}" of machine-api.`,
    machine: null,
    job: null,
  };
}
