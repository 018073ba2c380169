/** The one interface every target kind implements: render a notification, send one attempt. */

import type { NotificationPayload } from '../events.js';
import type { AttemptResult } from '../rules.js';
import type { TargetSettings } from '../targets.js';

export interface Outgoing {
  /** The delivery id, the same on every attempt (a webhook's `webhook-id`, an e-mail's Message-ID). */
  id: string;
  payload: NotificationPayload;
  settings: TargetSettings;
  /** The job's photo, when the notification is about a job and a camera took one. */
  photo: Buffer | null;
  /** Aborted when the attempt's time is up; senders stop at once. */
  signal: AbortSignal;
  /** The attempt's time budget, for clients that take timeouts rather than a signal. */
  timeoutMs: number;
}

export interface TargetSender {
  /** Makes one attempt. Never throws; never puts a secret (token, password, secret URL) in what it returns. */
  send(outgoing: Outgoing): Promise<AttemptResult>;
}
