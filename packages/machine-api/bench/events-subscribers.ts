/**
 * A process holding many `GET /events` subscribers (forked by events.ts, so that reading 100 000 events a
 * second does not share the event loop of the simulated printers). argv: base URL, first index, count.
 *
 * Each `machine.temperatures` event carries the extruder temperature the simulator set, which encodes the
 * wall-clock millisecond of the change (`(ms % 1e6) / 1000`); the worker records, per event, the time from
 * that change to receipt (`change`), from the event's publication (`time`) to receipt (`publish`), and from
 * the change to the publication (`changeToPublish`: the simulator, the backend and the observer, without
 * the delivery to the streams).
 * Frames are scanned, not JSON-parsed, so the reader stays cheap. Messages: {ready} once every stream
 * answered, then on {report} the recorded delays in ms, which are then cleared.
 */
import { type ClientRequest, request } from 'node:http';

const [baseUrl, firstArg, countArg] = process.argv.slice(2);
const first = Number(firstArg);
const count = Number(countArg);

let change: number[] = [];
let publish: number[] = [];
let changeToPublish: number[] = [];
let measuredIds = new Set<string>();
let events = 0;
const requests: ClientRequest[] = [];

/** Subscriber `i`'s stream: most take every event, some filter by type, some by machine. */
function pathOf(i: number): string {
  if (i % 4 === 1) return '/events?types=machine.temperatures,machine.state';
  if (i % 4 === 3) return `/events?machine_id=klipper-${String(i % 100).padStart(2, '0')}`;
  return '/events';
}

const CURRENT = '"extruder":{"current":';
const TIME = '"time":"';

function onFrame(frame: string, now: number): void {
  events += 1;
  if (!frame.includes('"type":"machine.temperatures"')) return;
  const c = frame.indexOf(CURRENT);
  const t = frame.indexOf(TIME);
  if (c < 0 || t < 0) return;
  const celsius = Number.parseFloat(frame.slice(c + CURRENT.length, c + CURRENT.length + 12));
  const changedAt = Math.round(celsius * 1000);
  const published = Date.parse(frame.slice(t + TIME.length, t + TIME.length + 24));
  change.push(((((now % 1e6) - changedAt) % 1e6) + 1e6) % 1e6);
  publish.push(now - published);
  // Once per event (the first worker's first copy): every copy carries the same two times.
  const id = frame.slice(4, frame.indexOf('\n'));
  if (first !== 0 || measuredIds.has(id)) return;
  measuredIds.add(id);
  changeToPublish.push(((((published % 1e6) - changedAt) % 1e6) + 1e6) % 1e6);
}

async function open(i: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const req = request(`${baseUrl}${pathOf(i)}`, { agent: false }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`GET /events answered ${res.statusCode}`));
      res.setEncoding('utf8');
      let buffered = '';
      res.on('data', (chunk: string) => {
        const now = Date.now();
        buffered += chunk;
        let end = buffered.indexOf('\n\n');
        while (end >= 0) {
          const frame = buffered.slice(0, end);
          if (frame.startsWith('id:')) onFrame(frame, now);
          buffered = buffered.slice(end + 2);
          end = buffered.indexOf('\n\n');
        }
      });
      res.on('error', () => undefined);
      resolve();
    });
    req.on('error', reject);
    req.end();
    requests.push(req);
  });
}

async function main(): Promise<void> {
  // A few at a time: a thousand simultaneous connects would measure the accept queue, not the stream.
  for (let i = first; i < first + count; i += 50) {
    await Promise.all(Array.from({ length: Math.min(50, first + count - i) }, (_, k) => open(i + k)));
  }
  process.send?.({ ready: true });
  process.on('message', (message: { report?: boolean; stop?: boolean }) => {
    if (message.report) {
      process.send?.({ change, publish, changeToPublish, events });
      change = [];
      publish = [];
      changeToPublish = [];
      measuredIds = new Set();
      events = 0;
    }
    if (message.stop) {
      for (const req of requests) req.destroy();
      process.exit(0);
    }
  });
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : error}\n`);
  process.exit(1);
});
