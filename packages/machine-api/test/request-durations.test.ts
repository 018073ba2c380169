/**
 * The request duration histogram is kept by hand (src/request-durations.ts) but must read exactly as the
 * prom-client Histogram it replaced: the same text for the same observations, in the same order, including
 * values on a bucket bound, beyond the last bound, and label sets seen in any order.
 */

import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { RequestDurations } from '../src/request-durations.js';

const NAME = 'machine_api_http_request_duration_seconds';
const HELP = 'Time to answer an HTTP request, by method, route pattern and status code.';
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60];

const OBSERVATIONS: [string, string, number, number][] = [
  ['GET', '/ping', 200, 0.0004],
  ['POST', '/print', 400, 0.0123],
  ['GET', '/ping', 200, 0.001],
  ['GET', 'unmatched', 404, 0.0031],
  ['GET', '/ping', 404, 75],
  ['POST', '/print', 400, 0.25],
  ['GET', '/machines/:id', 200, 0],
  ['GET', '/ping', 200, 60],
  ['DELETE', '/keys/:name', 403, 1.7],
  ['POST', '/print', 200, 2.5000001],
];

describe('request durations', () => {
  it('renders the same exposition text and JSON as a prom-client Histogram', async () => {
    const theirs = new Registry();
    const histogram = new Histogram({
      name: NAME,
      help: HELP,
      labelNames: ['method', 'route', 'status_code'],
      buckets: BUCKETS,
      registers: [theirs],
    });
    const ours = new Registry();
    const durations = new RequestDurations(NAME, HELP, BUCKETS, ours);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    for (const [method, route, status, seconds] of OBSERVATIONS) {
      histogram.observe({ method, route, status_code: status }, seconds);
      durations.observe(method, route, status, seconds);
    }
    const text = await ours.metrics();
    expect(text).toBe(await theirs.metrics());
    expect(text).toContain(`${NAME}_count{method="GET",route="/ping",status_code="200"} 3`);
    expect(text).toContain(`${NAME}_bucket{le="60",method="GET",route="/ping",status_code="404"} 0`);
    expect(text).toContain(`${NAME}_bucket{le="+Inf",method="GET",route="/ping",status_code="404"} 1`);
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
  });
});
