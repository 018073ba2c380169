/**
 * Writes a zip file as a stream (fflate's `Zip` into a file), with backpressure, so packages of any size
 * are written without holding them in memory.
 */

import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
import { strToU8, Zip, ZipDeflate } from 'fflate';

export class ZipFileWriter {
  private readonly output: WriteStream;
  private readonly zip: Zip;
  private readonly ready: Uint8Array[] = [];
  private failure: Error | null = null;

  constructor(private readonly path: string) {
    this.output = createWriteStream(path);
    // Without a listener a write error (disk full) would crash the process; it fails this zip instead.
    this.output.on('error', (error) => {
      this.failure ??= error;
    });
    this.zip = new Zip((error, chunk) => {
      if (error) this.failure ??= error;
      else this.ready.push(chunk);
    });
  }

  /** Starts a deflated entry; push its data (ending with `final`), then `flush()` now and then. */
  entry(name: string): ZipDeflate {
    const entry = new ZipDeflate(name, { level: 6 });
    this.zip.add(entry);
    return entry;
  }

  /** Adds a whole text entry. */
  text(name: string, text: string): void {
    this.entry(name).push(strToU8(text), true);
  }

  /** Records an error from a producer; the next `flush` or `close` throws it. */
  fail(error: Error): void {
    this.failure ??= error;
  }

  /** Writes what the zip has produced so far, waiting while the file is busy. */
  async flush(): Promise<void> {
    while (this.ready.length > 0) {
      if (this.failure) break;
      if (!this.output.write(this.ready.shift()!)) await once(this.output, 'drain');
    }
    if (this.failure) throw this.failure;
  }

  /** Ends the zip and the file. */
  async close(): Promise<void> {
    this.zip.end();
    await this.flush();
    this.output.end();
    await finished(this.output);
  }

  /** Gives up: closes and removes the partial file. */
  async discard(): Promise<void> {
    this.zip.terminate();
    this.output.destroy();
    await rm(this.path, { force: true });
  }
}
