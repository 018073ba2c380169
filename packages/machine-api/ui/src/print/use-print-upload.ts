/**
 * The upload of a print form: how much of the body is sent, and what came back (the accepted print,
 * the queued job, or the API's own message on refusal). One of them at a time.
 */

import { useState } from 'preact/hooks';
import { errorText } from '../api/client';
import { type PrintAnswer, type QueueAnswer, upload } from '../api/upload';

export interface PrintUpload {
  /** Fraction of the body sent (0–1), null before the first send. */
  sent: number | null;
  error: string | null;
  accepted: PrintAnswer | null;
  queued: QueueAnswer | null;
  /** Sent and not yet answered. */
  sending: boolean;
  /** Forgets the last answer (a new file was chosen). */
  reset(): void;
  /** Shows a problem found before sending. */
  fail(message: string): void;
  /** Sends `params` and `file` to `POST /print` (one machine) or `POST /queue` (any machine). */
  send(target: 'machine' | 'any', params: Record<string, unknown>, file: File): Promise<void>;
}

export function usePrintUpload(): PrintUpload {
  const [sent, setSent] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [accepted, setAccepted] = useState<PrintAnswer | null>(null);
  const [queued, setQueued] = useState<QueueAnswer | null>(null);

  const reset = () => {
    setAccepted(null);
    setQueued(null);
    setError(null);
  };

  const send = async (target: 'machine' | 'any', params: Record<string, unknown>, file: File) => {
    reset();
    setSent(0);
    const form = new FormData();
    form.append('params', JSON.stringify(params));
    form.append('file', file, file.name);
    try {
      if (target === 'machine') setAccepted(await upload<PrintAnswer>('/print', form, setSent));
      else setQueued(await upload<QueueAnswer>('/queue', form, setSent));
    } catch (e) {
      setError(errorText(e));
    }
  };

  return {
    sent,
    error,
    accepted,
    queued,
    sending: sent !== null && accepted === null && queued === null && error === null,
    reset,
    fail: setError,
    send,
  };
}
