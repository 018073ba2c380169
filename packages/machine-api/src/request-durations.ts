/**
 * The HTTP request duration histogram, kept here and rendered by prom-client's registry exactly as a
 * prom-client `Histogram` with the same name, labels and buckets would be. Every request is observed, and
 * prom-client's `observe` (a labels object validated and hashed into a string key per call) cost about a
 * microsecond, 3 % of all the CPU `GET /ping` takes (profile in bench/results/m-ping-2026-11-24b.md); here
 * an observation is three map lookups and two additions.
 */

import type { Metric, Registry } from 'prom-client';

type Labels = { method: string; route: string; status_code: number };

/** One label set: non-cumulative counts per bucket (prom-client's `bucketValues`), sum and count. */
interface Cell {
  labels: Labels;
  counts: number[];
  sum: number;
  count: number;
}

export class RequestDurations {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  /** Label sets in the order they were first observed, the order prom-client lists them in. */
  private readonly cells: Cell[] = [];
  /** method → route → status code → cell. */
  private readonly index = new Map<string, Map<string, Map<number, Cell>>>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly upperBounds: readonly number[],
    registry: Registry,
  ) {
    // The registry renders any metric that has `name` and `getForPromString()`.
    registry.registerMetric(this as unknown as Metric);
  }

  observe(method: string, route: string, statusCode: number, seconds: number): void {
    let byRoute = this.index.get(method);
    if (!byRoute) {
      byRoute = new Map();
      this.index.set(method, byRoute);
    }
    let byStatus = byRoute.get(route);
    if (!byStatus) {
      byStatus = new Map();
      byRoute.set(route, byStatus);
    }
    let cell = byStatus.get(statusCode);
    if (!cell) {
      cell = {
        labels: { method, route, status_code: statusCode },
        counts: this.upperBounds.map(() => 0),
        sum: 0,
        count: 0,
      };
      byStatus.set(statusCode, cell);
      this.cells.push(cell);
    }
    // Like prom-client: the first bucket whose bound is ≥ the value; beyond the last, only +Inf counts it.
    const bounds = this.upperBounds;
    for (let i = 0; i < bounds.length; i++) {
      if (seconds <= (bounds[i] as number)) {
        cell.counts[i] = (cell.counts[i] as number) + 1;
        break;
      }
    }
    cell.sum += seconds;
    cell.count += 1;
  }

  /** The values as prom-client's `Histogram.getForPromString()` gives them to the registry. */
  getForPromString() {
    const bucketName = `${this.name}_bucket`;
    const values = this.cells.flatMap((cell) => {
      let cumulative = 0;
      return [
        ...this.upperBounds.map((le, i) => {
          cumulative += cell.counts[i] ?? 0;
          return {
            labels: { le },
            sharedLabels: cell.labels,
            value: cumulative,
            metricName: bucketName,
            exemplar: null,
          };
        }),
        {
          labels: { le: '+Inf' },
          sharedLabels: cell.labels,
          value: cell.count,
          metricName: bucketName,
          exemplar: null,
        },
        { labels: {}, sharedLabels: cell.labels, value: cell.sum, metricName: `${this.name}_sum` },
        { labels: {}, sharedLabels: cell.labels, value: cell.count, metricName: `${this.name}_count` },
      ];
    });
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The same values with the labels merged, as prom-client's `Histogram.get()` (JSON export). */
  async get() {
    const data = this.getForPromString();
    return {
      ...data,
      values: data.values.map(({ labels, sharedLabels, ...rest }) => ({
        ...rest,
        labels: { ...labels, ...sharedLabels },
      })),
    };
  }
}
