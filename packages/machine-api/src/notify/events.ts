/**
 * What a notification says: the event names operators filter on, and the one record every target kind
 * renders (a webhook sends it as JSON, the chat and e-mail kinds as text made by `message.ts`).
 */

/** Every event a target can subscribe to, as named in `events = [...]` and in payloads. */
export const NOTIFY_EVENTS = [
  'job.started',
  'job.completed',
  'job.failed',
  'job.cancelled',
  'job.paused',
  'machine.failed',
  'machine.offline',
  'machine.online',
  'machine.awaiting_clear',
  'queue.waiting',
  'queue.unroutable',
  'test',
] as const;
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];

/** A delivery's payload type: an event, or the digest a burst limit folds several events into. */
export type PayloadType = NotifyEvent | 'digest';

/** Events that pass a target's quiet hours (everything else waits for no one: it is not sent). */
export const URGENT_EVENTS: readonly NotifyEvent[] = ['job.failed', 'machine.failed', 'machine.offline'];

export interface JobFacts {
  id: string;
  name: string;
  file_name: string;
  status: string;
  machine_id: string | null;
  /** Percent 0–100 when known. */
  progress: number | null;
  /** From the machine taking the job (or its creation) to its end or now, in seconds. */
  duration_seconds: number | null;
  /** Why it failed or was cancelled. */
  message: string | null;
  /** The slicer's estimate of the material, once known. */
  material: { filament_used_g: number | null; filament_used_mm: number | null } | null;
}

/** The body of a notification (the webhook's `data`; the text kinds render it). */
export interface NotificationData {
  title: string;
  message: string;
  machine: { id: string } | null;
  job: JobFacts | null;
  /** Where to look in the dashboard (`[server] public_url`), when configured. */
  link?: string;
  /** For a digest: the folded notifications, oldest first. */
  events?: { type: NotifyEvent; timestamp: string; title: string }[];
}

/** A notification as recorded in the outbox (the webhook body is exactly this). */
export interface NotificationPayload {
  type: PayloadType;
  /** ISO 8601: when the event happened. */
  timestamp: string;
  data: NotificationData;
}

/** The photo source of job notifications (the cameras wire it; null when there is none). */
export type PhotoSource = (jobId: string) => Promise<Buffer | null>;
