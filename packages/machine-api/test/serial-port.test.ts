import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSerialPort, ReadlineParser, type SerialPortStream } from '../src/machines/usb/serial-port.js';
import { waitFor } from './usb-fixtures.js';

// The far end is `socat` joining a pty to `cat`, in its own process: every line written comes straight back,
// and nothing else in this process (no timer, no socket) wakes the event loop while a read waits for it.
describe('serial ports', () => {
  let dir: string;
  let socat: ChildProcess;
  let port: SerialPortStream;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'serial-port-'));
    const path = join(dir, 'tty');
    socat = spawn('socat', [`pty,raw,echo=0,link=${path}`, 'exec:cat'], { stdio: 'ignore' });
    socat.once('error', () => undefined);
    await waitFor('socat to create the pty (apt-get install -y socat)', async () => existsSync(path));
    port = await openSerialPort(path, 115_200);
  });

  afterAll(async () => {
    if (port?.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()));
    if (socat && socat.exitCode === null) {
      const exited = once(socat, 'exit');
      socat.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  });

  // On Node >= 26.4 the binding's poller events alone resume no waiting read (see src/machines/usb/serial-port.ts):
  // without the correction the first answer here is never heard and the test runs out of time.
  it('hears each answer as it arrives, with nothing else due on the event loop', {
    timeout: 20_000,
  }, async () => {
    const lines = port.pipe(new ReadlineParser({ delimiter: '\n', encoding: 'latin1' }));
    for (let i = 0; i < 50; i++) {
      const answer = once(lines, 'data');
      port.write(`N${i} M105\n`);
      expect(await answer).toEqual([`N${i} M105`]);
    }
  });
});
