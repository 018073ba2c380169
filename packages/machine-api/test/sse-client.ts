/**
 * A minimal Server-Sent Events reader for tests: opens `GET /events` with fetch (Node 20 has no global
 * EventSource), parses frames as the EventSource algorithm does (`id:`, `data:`, comments, blank line),
 * and lets a test wait for events or drop the connection.
 */

export interface ReceivedEvent {
  /** The frame's `id:` line. */
  lastEventId: string;
  /** The parsed `data:` JSON. */
  event: {
    id: number;
    type: string;
    /** The instance that published it. */
    instance: string;
    time: string;
    machine_id: string | null;
    job_id: string | null;
    data: Record<string, unknown>;
  };
}

export class SseClient {
  readonly events: ReceivedEvent[] = [];
  comments = 0;
  status = 0;
  headers: Headers | null = null;
  private readonly controller = new AbortController();
  private waiters: (() => void)[] = [];
  private done: Promise<void>;

  private constructor(url: string, headers: Record<string, string>) {
    this.done = this.run(url, headers);
  }

  /** Connects; resolves once the response headers have arrived. */
  static async open(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const client = new SseClient(url, headers);
    await client.until(() => client.status !== 0, 'the response headers');
    return client;
  }

  /** Resolves when `predicate` holds for the events received so far. */
  async until(predicate: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Drops the connection (as a network failure would). */
  async close(): Promise<void> {
    this.controller.abort();
    await this.done.catch(() => undefined);
  }

  /** Id of the last event received (what an EventSource sends back as `Last-Event-ID`). */
  get lastId(): string | undefined {
    return this.events.at(-1)?.lastEventId;
  }

  private async run(url: string, headers: Record<string, string>): Promise<void> {
    const response = await fetch(url, { headers, signal: this.controller.signal });
    this.headers = response.headers;
    this.status = response.status;
    this.wake();
    if (!response.body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          this.frame(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf('\n\n');
        }
        this.wake();
      }
    } catch (error) {
      if (!this.controller.signal.aborted) throw error;
    }
  }

  private frame(text: string): void {
    let id = '';
    let data: string | null = null;
    for (const line of text.split('\n')) {
      if (line.startsWith(':')) this.comments += 1;
      else if (line.startsWith('id: ')) id = line.slice(4);
      else if (line.startsWith('data: ')) data = data === null ? line.slice(6) : `${data}\n${line.slice(6)}`;
    }
    if (data !== null) this.events.push({ lastEventId: id, event: JSON.parse(data) });
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }
}
