/**
 * A benchmark scenario: a running service and one request to hammer it with. The harness measures the
 * same request against a bare `node:http` server answering the same bytes, in the same run.
 */
export interface BenchRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
  /**
   * Bodies sent in turn instead of `body` (one per request, round-robin over all connections), e.g. to
   * spread uploads over several machines. The service's answer to the first one is the baseline's answer.
   */
  bodies?: Buffer[];
  /**
   * Makes each request in turn (method, path, headers, body), e.g. to spread a workload over many users
   * and tokens. The service's answer to this request itself is the baseline's answer.
   */
  vary?: () => Omit<BenchRequest, 'vary' | 'bodies'>;
}

export interface PreparedScenario {
  /** Base URL of the service under test, e.g. `http://127.0.0.1:41234`. */
  baseUrl: string;
  request: BenchRequest;
  /** Extra facts to print beside the numbers (data set size, file size…). */
  notes?: Record<string, string | number>;
  /**
   * The second baseline, a script forked with its port first, then `args`: for a data route, one serving
   * the same answer from the same SQL run directly on the store, prepared once; for an upload, a bare
   * node:http server streaming each body to disk (what receiving it costs at the least). The table's
   * "vs direct" column is the service's req/s as a ratio of its.
   */
  direct?: { script: string; args: string[] };
  /**
   * Statements the service's database has run so far (e.g. PostgreSQL's committed transactions): read
   * before and after the measurement, the table shows the difference per request.
   */
  countStatements?(): Promise<number>;
  teardown(): Promise<void>;
}

export interface Scenario {
  name: string;
  /**
   * The scenario this one is a variant of (same data and request on another store or process count);
   * when both ran, the table shows this one's req/s as a ratio of the twin's.
   */
  twin?: string;
  /** Concurrent connections (default 32). */
  connections?: number;
  /** Seconds measured per target in all, split over the rounds (default 5, or BENCH_SECONDS). */
  seconds?: number;
  prepare(): Promise<PreparedScenario>;
}

/**
 * A scenario that measures itself (start-up time, event-stream delivery, one big upload at a time): what
 * it measures is not requests per second, so it runs its own service and its own baseline, once, and
 * returns its figures (numbers and units in the key, e.g. `listen ms`), printed in a table of their own.
 */
export interface MeasuredScenario {
  name: string;
  kind: 'measured';
  run(options: { seconds: number }): Promise<Record<string, string | number>>;
}

export type AnyScenario = Scenario | MeasuredScenario;

export function isMeasured(scenario: AnyScenario): scenario is MeasuredScenario {
  return 'kind' in scenario && scenario.kind === 'measured';
}
