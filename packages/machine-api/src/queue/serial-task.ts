/** A task that never runs twice at once: asked while it runs, it runs once more after (the ask may come too late for the run under way). */
export class SerialTask {
  private running: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly task: () => Promise<void>,
    private readonly stopped: () => boolean,
  ) {}

  run(): void {
    if (this.stopped()) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.task();
        } while (this.again && !this.stopped());
      } finally {
        this.running = null;
      }
    })();
  }

  /** Resolves once the run under way (if any) has ended. */
  async idle(): Promise<void> {
    await this.running;
  }
}
