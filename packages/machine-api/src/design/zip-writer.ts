/**
 * Writes a zip file as a stream (yazl into a file): each entry's data is read only when the archive reaches
 * it, so packages of any size are written without holding them in memory. yazl is the writing half of the
 * zip library the service reads archives with (yauzl, zip-archive.ts).
 */

import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ZipFile } from 'yazl';

export class ZipFileWriter {
  private readonly zip = new ZipFile();
  private readonly output: Readable;
  private readonly written: Promise<void>;

  constructor(private readonly path: string) {
    this.output = this.zip.outputStream as Readable;
    // yazl reports a failed entry (a source that cannot be read) on the ZipFile, not on its output.
    const failed = new Promise<never>((_, reject) => this.zip.once('error', reject));
    this.written = Promise.race([pipeline(this.output, createWriteStream(path)), failed]);
    // Observed by close(); a zip given up with discard() has no one waiting for it.
    this.written.catch(() => undefined);
  }

  /** Adds a whole text entry. */
  text(name: string, text: string): void {
    this.zip.addBuffer(Buffer.from(text, 'utf8'), name);
  }

  /** Adds the file at `path` as the entry `name`. */
  file(name: string, path: string): void {
    this.zip.addFile(path, name);
  }

  /** Adds an entry whose data `open` streams, opened when the archive reaches it. */
  stream(name: string, open: () => Promise<Readable>): void {
    this.zip.addReadStreamLazy(name, (done) => {
      open().then(
        (source) => {
          source.once('error', (error) => this.zip.emit('error', error));
          done(null, source);
        },
        (error: unknown) => this.zip.emit('error', error),
      );
    });
  }

  /** Ends the zip and waits until the file is written; throws the first failure of any entry. */
  async close(): Promise<void> {
    this.zip.end();
    await this.written;
  }

  /** Gives up: stops writing and removes the partial file. */
  async discard(): Promise<void> {
    this.output.destroy();
    await this.written.catch(() => undefined);
    await rm(this.path, { force: true });
  }
}
