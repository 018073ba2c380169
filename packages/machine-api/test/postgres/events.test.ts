/**
 * One event stream for the farm (machine-api-postgres project only): two instances on one PostgreSQL
 * database, each streaming every instance's events in one id order, each event naming its instance;
 * a client that drops its stream on one instance resumes on the other with `Last-Event-ID` and gets
 * exactly what it missed.
 */

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MachineApiUnderTest, startMachineApi, waitFor } from '../harness.js';
import { type ReceivedEvent, SseClient } from '../sse-client.js';
import { createPostgresDatabase } from '../test-database.js';

const GCODE = 'G28\nG1 X10 Y10 Z0.2 F3000\nG1 X20 E1\n';

function config(instance: string, machine: string): string {
  return [
    '[server]',
    `instance = "${instance}"`,
    `[machines.${machine}]`,
    'type = "Noop"',
    'print_seconds = 0.05',
    // Each print leaves the bed clear, so queued jobs print one after another without a person.
    'clearing = "auto"',
  ].join('\n');
}

let databaseUrl: string;
let a: MachineApiUnderTest;
let b: MachineApiUnderTest;

beforeAll(async () => {
  databaseUrl = await createPostgresDatabase();
  a = await startMachineApi(config('a', 'a1'), { databaseUrl });
  b = await startMachineApi(config('b', 'b1'), { databaseUrl });
});

afterAll(async () => {
  await a?.close();
  await b?.close();
});

/** Queues a G-code job for `machine` through `api`; answers its id. */
async function queue(api: MachineApiUnderTest, machine: string, name: string): Promise<string> {
  const body = new FormData();
  body.append('params', JSON.stringify({ job_name: name, machine_ids: [machine] }));
  body.append('file', new Blob([GCODE]), 'part.gcode');
  const res = await fetch(`${api.baseUrl}/queue`, { method: 'POST', body });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

async function completed(api: MachineApiUnderTest, jobId: string): Promise<void> {
  await waitFor(async () => {
    const job = (await (await fetch(`${api.baseUrl}/jobs/${jobId}`)).json()) as { status: string };
    return job.status === 'completed';
  });
}

const completes = (jobId: string) => (e: ReceivedEvent) =>
  e.event.type === 'job.updated' && e.event.job_id === jobId && e.event.data.status === 'completed';

/** Ids strictly increase, and each frame's `id:` line is the event's id. */
function expectOrdered(events: readonly ReceivedEvent[]): void {
  const ids = events.map((e) => e.event.id);
  for (const [index, id] of ids.entries()) {
    if (index > 0) expect(id).toBeGreaterThan(ids[index - 1]!);
    expect(events[index]!.lastEventId).toBe(String(id));
  }
}

describe('one event stream on a farm', () => {
  it("streams B's events on A, in order, naming B; both instances stream the same sequence", async () => {
    const onA = await SseClient.open(`${a.baseUrl}/events`);
    const onB = await SseClient.open(`${b.baseUrl}/events`);
    try {
      const jobId = await queue(b, 'b1', 'printed on b');
      await onA.until(() => onA.events.some(completes(jobId)), "B's job to complete, on A's stream");
      await onB.until(() => onB.events.some(completes(jobId)), "B's job to complete, on B's stream");
      const jobEvents = onA.events.filter((e) => e.event.job_id === jobId && e.event.type === 'job.updated');
      expect(jobEvents.map((e) => [e.event.instance, e.event.data.status])).toEqual([
        ['b', 'queued'],
        ['b', 'slicing'],
        ['b', 'uploading'],
        ['b', 'printing'],
        ['b', 'completed'],
      ]);
      const machineEvents = onA.events.filter((e) => e.event.machine_id === 'b1');
      expect(machineEvents.length).toBeGreaterThan(jobEvents.length);
      expect(new Set(machineEvents.map((e) => e.event.instance))).toEqual(new Set(['b']));
      expectOrdered(onA.events);
      expectOrdered(onB.events);
      // Over the span both streams were open for, they carry the same events.
      const from = Math.max(onA.events[0]!.event.id, onB.events[0]!.event.id);
      const to = onA.events.find(completes(jobId))!.event.id;
      const span = (stream: SseClient) =>
        stream.events
          .filter((e) => e.event.id >= from && e.event.id <= to)
          .map((e) => `${e.event.id} ${e.event.instance} ${e.event.type}`);
      expect(span(onB)).toEqual(span(onA));
    } finally {
      await onA.close();
      await onB.close();
    }
  });

  it('resumes on A from an id last seen on B: exactly the missed events, no duplicate, no gap', async () => {
    const reference = await SseClient.open(`${a.baseUrl}/events`);
    const onB = await SseClient.open(`${b.baseUrl}/events`);
    try {
      const before = await queue(b, 'b1', 'before the drop');
      await onB.until(() => onB.events.some(completes(before)), 'the first job, on B');
      await onB.close();
      const resumeFrom = onB.lastId!;
      // Both instances publish while the client is away.
      const awayA = await queue(a, 'a1', 'while away, on a');
      const awayB = await queue(b, 'b1', 'while away, on b');
      await completed(a, awayA);
      await completed(b, awayB);
      await reference.until(
        () => reference.events.some(completes(awayA)) && reference.events.some(completes(awayB)),
        'the reference stream to see both jobs complete',
      );
      const resumed = await SseClient.open(`${a.baseUrl}/events`, { 'last-event-id': resumeFrom });
      try {
        const lastReference = reference.events.at(-1)!.event.id;
        await resumed.until(
          () => (resumed.events.at(-1)?.event.id ?? 0) >= lastReference,
          'the resumed stream to catch up',
        );
        expect(resumed.events[0]!.event.id).toBe(Number(resumeFrom) + 1);
        const seen = [...onB.events, ...resumed.events]
          .map((e) => e.event.id)
          .filter((id) => id >= reference.events[0]!.event.id && id <= lastReference);
        expect(seen).toEqual(reference.events.map((e) => e.event.id).filter((id) => id <= lastReference));
        const instances = new Set(resumed.events.map((e) => e.event.instance));
        expect(instances).toEqual(new Set(['a', 'b']));
        expectOrdered(resumed.events);
      } finally {
        await resumed.close();
      }
    } finally {
      await reference.close();
    }
  });

  it('gives both instances one strictly increasing order of many interleaved events', async () => {
    const onA = await SseClient.open(`${a.baseUrl}/events?types=job.updated,queue.changed`);
    const onB = await SseClient.open(`${b.baseUrl}/events?types=job.updated,queue.changed`);
    try {
      const count = 8;
      const jobs = await Promise.all(
        Array.from({ length: count }, (_, i) => [
          queue(a, 'a1', `burst a${i}`).then((id) => ({ id, api: a, instance: 'a' })),
          queue(b, 'b1', `burst b${i}`).then((id) => ({ id, api: b, instance: 'b' })),
        ]).flat(),
      );
      for (const job of jobs) await completed(job.api, job.id);
      for (const stream of [onA, onB]) {
        await stream.until(
          () => jobs.every((job) => stream.events.some(completes(job.id))),
          'every job to complete on both streams',
        );
      }
      expectOrdered(onA.events);
      expectOrdered(onB.events);
      const ofJobs = (stream: SseClient) => {
        const ids = new Set(jobs.map((job) => job.id));
        return stream.events
          .filter((e) => e.event.job_id !== null && ids.has(e.event.job_id))
          .map((e) => `${e.event.id} ${e.event.instance} ${e.event.type} ${e.event.job_id}`);
      };
      expect(ofJobs(onA).length).toBeGreaterThanOrEqual(count * 2 * 6);
      expect(ofJobs(onB)).toEqual(ofJobs(onA));
      // Every job's events name the instance that ran it.
      for (const job of jobs) {
        const named = onA.events.filter((e) => e.event.job_id === job.id).map((e) => e.event.instance);
        expect(new Set(named)).toEqual(new Set([job.instance]));
      }
      // The history answers the same order on both instances.
      const history = async (api: MachineApiUnderTest) =>
        (
          (await (
            await fetch(`${api.baseUrl}/events/history?types=job.updated,queue.changed&limit=10000`)
          ).json()) as { id: number }[]
        ).map((event) => event.id);
      const onAHistory = await history(a);
      expect(await history(b)).toEqual(onAHistory);
      const streamed = onA.events.map((e) => e.event.id);
      expect(onAHistory.filter((id) => id >= streamed[0]! && id <= streamed.at(-1)!)).toEqual(streamed);
    } finally {
      await onA.close();
      await onB.close();
    }
  });

  it('catches up after its listening connection drops: nothing B published meanwhile is missing on A', async () => {
    const onA = await SseClient.open(`${a.baseUrl}/events`);
    const onB = await SseClient.open(`${b.baseUrl}/events`);
    try {
      // The database ends A's LISTEN connection, as a restart of PostgreSQL or a network failure would.
      // Only this test's database: another test file running at the same time has an instance `a` too.
      const admin = new pg.Client({ connectionString: databaseUrl });
      await admin.connect();
      try {
        const ended = await admin.query(
          "select pg_terminate_backend(pid) as ended from pg_stat_activity where application_name = 'machine-api events a' and datname = current_database()",
        );
        expect(ended.rows).toEqual([{ ended: true }]);
      } finally {
        await admin.end();
      }
      const jobId = await queue(b, 'b1', 'while a reconnects');
      await onB.until(() => onB.events.some(completes(jobId)), 'the job to complete, on B');
      await onA.until(() => onA.events.some(completes(jobId)), 'the job to complete, on A');
      const to = onB.events.find(completes(jobId))!.event.id;
      const from = Math.max(onA.events[0]!.event.id, onB.events[0]!.event.id);
      const span = (stream: SseClient) =>
        stream.events.map((e) => e.event.id).filter((id) => id >= from && id <= to);
      expect(span(onA)).toEqual(span(onB));
      expect(span(onA).length).toBeGreaterThan(5);
    } finally {
      await onA.close();
      await onB.close();
    }
  });
});
