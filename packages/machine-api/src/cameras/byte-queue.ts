/**
 * A bounded FIFO of bytes for stream parsers: appended at the end, consumed from the front, grown by
 * doubling (so a frame arriving in many small chunks is copied O(n) times, not O(n²)), and never over
 * `limit` bytes: the caller feeds it at most `room()` bytes at a time.
 */
export class ByteQueue {
  private buffer = Buffer.alloc(0);
  private start = 0;
  private end = 0;

  constructor(readonly limit: number) {}

  get length(): number {
    return this.end - this.start;
  }

  /** Bytes that may still be appended. */
  room(): number {
    return this.limit - this.length;
  }

  /** The queued bytes (a view: valid until the next `append`/`consume`). */
  view(): Buffer {
    return this.buffer.subarray(this.start, this.end);
  }

  append(bytes: Buffer): void {
    if (bytes.length > this.room()) throw new RangeError('ByteQueue: append over the limit');
    if (this.end + bytes.length > this.buffer.length) this.makeRoom(bytes.length);
    bytes.copy(this.buffer, this.end);
    this.end += bytes.length;
  }

  /** Drops `count` bytes from the front. */
  consume(count: number): void {
    this.start = Math.min(this.start + count, this.end);
    if (this.start === this.end) this.start = this.end = 0;
  }

  /** Copies the first `count` bytes out (frames outlive the queue's buffer). */
  take(count: number): Buffer {
    const out = Buffer.from(this.buffer.subarray(this.start, this.start + count));
    this.consume(count);
    return out;
  }

  private makeRoom(extra: number): void {
    const needed = this.length + extra;
    if (needed <= this.buffer.length) {
      this.buffer.copyWithin(0, this.start, this.end);
    } else {
      const grown = Buffer.allocUnsafe(
        Math.min(this.limit, Math.max(needed, this.buffer.length * 2, 64 * 1024)),
      );
      this.buffer.copy(grown, 0, this.start, this.end);
      this.buffer = grown;
    }
    this.end = this.length;
    this.start = 0;
  }
}
