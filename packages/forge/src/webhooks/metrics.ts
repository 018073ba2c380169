/** Webhook delivery metrics (prom-client, in the process's default registry). */
import { Counter, Gauge, Histogram, register } from 'prom-client';

function once<T>(name: string, make: () => T): T {
  return (register.getSingleMetric(name) as T | undefined) ?? make();
}

/** Finished attempts by outcome: delivered, retry (failed, will retry), failed (gave up), dropped, refused. */
export const deliveryAttempts = once(
  'forge_webhook_delivery_attempts_total',
  () =>
    new Counter({
      name: 'forge_webhook_delivery_attempts_total',
      help: 'Webhook delivery attempts by outcome',
      labelNames: ['outcome'] as const,
    }),
);

export const deliveryLatency = once(
  'forge_webhook_delivery_duration_seconds',
  () =>
    new Histogram({
      name: 'forge_webhook_delivery_duration_seconds',
      help: 'Time from sending a webhook request to its answer (or failure)',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    }),
);

/** Deliveries waiting or in flight, as this process last counted them. */
export const outboxDepth = once(
  'forge_webhook_outbox_depth',
  () => new Gauge({ name: 'forge_webhook_outbox_depth', help: 'Webhook deliveries pending or in flight' }),
);
