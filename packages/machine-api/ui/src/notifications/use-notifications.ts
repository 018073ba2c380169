/**
 * The notifications page's data: the targets and the delivery log (filtered by status), read again every
 * few seconds and after every change, and the outcome of the last change (an error or a notice).
 */

import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must, type Schemas } from '../api/client';

export type Target = Schemas['NotificationTarget'];
export type Delivery = Schemas['NotificationDelivery'];
export type DeliveryFilter = '' | Delivery['status'];

/** How often the page reads the log again while it is open (deliveries are retried in the background). */
const REFRESH_MS = 5000;

export interface Notifications {
  targets: Target[] | null;
  deliveries: Delivery[];
  status: DeliveryFilter;
  setStatus(status: DeliveryFilter): void;
  error: string | null;
  notice: string | null;
  /** Runs a change, then shows `done` (or the API's message) and reads everything again. */
  act(what: () => Promise<unknown>, done?: string): Promise<void>;
}

export function useNotifications(): Notifications {
  const [targets, setTargets] = useState<Target[] | null>(null);
  const [deliveries, setDeliveries] = useState<Delivery[]>([]);
  const [status, setStatus] = useState<DeliveryFilter>('');
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const reload = async () => {
    try {
      setTargets(await must(api.GET('/notifications/targets')));
      const query = status ? { status, limit: 200 } : { limit: 200 };
      setDeliveries(await must(api.GET('/notifications/deliveries', { params: { query } })));
      setError(null);
    } catch (e) {
      setError(errorText(e));
    }
  };
  useEffect(() => {
    void reload();
    const timer = setInterval(() => void reload(), REFRESH_MS);
    return () => clearInterval(timer);
  }, [status]);

  const act = async (what: () => Promise<unknown>, done?: string) => {
    setError(null);
    setNotice(null);
    try {
      await what();
      if (done) setNotice(done);
      await reload();
    } catch (e) {
      setError(errorText(e));
    }
  };

  return { targets, deliveries, status, setStatus, error, notice, act };
}
