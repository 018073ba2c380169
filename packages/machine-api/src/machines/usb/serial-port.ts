/**
 * Serial ports as the USB backend opens and lists them: the platform's binding from `@serialport/bindings-cpp`
 * under `@serialport/stream`, with one correction on top.
 *
 * Why the correction: bindings-cpp 13.0 hands its poller's events (`readable`, `writable`) to JavaScript with a
 * plain N-API function call from a libuv callback, outside any callback scope. Since Node 26.4
 * (nodejs/node#62969) nothing then runs the promise continuations such an event resolves: a read that had to
 * wait for data (EAGAIN) resumes only when something unrelated wakes the event loop (a timer, a socket). A
 * printer's `ok` sent within milliseconds was heard seconds later, or never while a print waited on it with
 * no timer due. The upstream fix (deliver the events with MakeCallback, serialport/bindings-cpp#239) is not
 * released; until it is, each poller event also queues an immediate. Node runs immediates from the event loop
 * inside a callback scope and drains the microtask queue after them, so the waiting read resumes at once.
 * Remove `promptEvents` once a bindings-cpp release delivers its events with MakeCallback.
 */

import {
  autoDetect,
  type BindingInterface,
  DarwinPortBinding,
  LinuxPortBinding,
  type PortInfo,
} from '@serialport/bindings-cpp';
import { SerialPortStream } from '@serialport/stream';

export { ReadlineParser } from '@serialport/parser-readline';

const POLLER_EVENTS = ['readable', 'writable', 'disconnect'] as const;
const nothing = () => undefined;
const wakeEventLoop = () => setImmediate(nothing);

/** The platform binding, with poller events that resume their waiting reads and writes promptly. */
function promptEvents(platform: BindingInterface): BindingInterface {
  return {
    list: () => platform.list(),
    async open(options) {
      const port = await platform.open(options);
      // The Linux and macOS ports poll their descriptor; the Windows port has no poller.
      if (port instanceof LinuxPortBinding || port instanceof DarwinPortBinding) {
        for (const event of POLLER_EVENTS) port.poller.on(event, wakeEventLoop);
      }
      return port;
    },
  };
}

const binding = promptEvents(autoDetect());

/** Opens the serial port at `path` (8N1, no flow control). */
export async function openSerialPort(path: string, baudRate: number): Promise<SerialPortStream> {
  const port = new SerialPortStream({ binding, path, baudRate, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((error) => (error ? reject(error) : resolve())));
  return port;
}

/** The serial ports the operating system knows (udev on Linux). */
export function listSerialPorts(): Promise<PortInfo[]> {
  return binding.list();
}

export type { SerialPortStream };
