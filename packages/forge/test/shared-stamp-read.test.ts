// PostgreSQL's change stamp is shared by concurrent readers (src/cache/shared-stamp-read.ts). What makes
// a kept answer safe to serve is that the stamp a request trusts was read after the request arrived: a
// query already in flight may predate a commit the client has seen. These tests drive the sharing with
// queries whose answers the test releases one by one.
import { describe, expect, it } from 'vitest';
import { SharedStampRead } from '../src/cache/shared-stamp-read.js';

/** A stand-in for the stamp query: each call is recorded and answered when the test says so. */
function controlledQuery() {
  const calls: { answer: (stamp: string) => void; fail: (error: Error) => void }[] = [];
  const query = () =>
    new Promise<string>((resolve, reject) => {
      calls.push({ answer: resolve, fail: reject });
    });
  return { calls, query };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('stamp reads shared by concurrent readers', () => {
  it('gives a reader who arrives while a query is in flight the result of a query sent after it asked', async () => {
    const { calls, query } = controlledQuery();
    const shared = new SharedStampRead(query);
    const first = shared.read();
    const second = shared.read();
    expect(calls).toHaveLength(1);

    calls[0]!.answer('snapshot-1');
    expect(await first).toBe('snapshot-1');
    await settle();
    // The second reader's query is sent only now, after the first settled.
    expect(calls).toHaveLength(2);
    calls[1]!.answer('snapshot-2');
    expect(await second).toBe('snapshot-2');
  });

  it('lets every reader arriving during one query share the next query', async () => {
    const { calls, query } = controlledQuery();
    const shared = new SharedStampRead(query);
    const first = shared.read();
    const waiting = [shared.read(), shared.read(), shared.read()];
    calls[0]!.answer('a');
    await first;
    await settle();
    expect(calls).toHaveLength(2);
    // A reader arriving while that next query is in flight waits for yet another one.
    const late = shared.read();
    calls[1]!.answer('b');
    expect(await Promise.all(waiting)).toEqual(['b', 'b', 'b']);
    await settle();
    expect(calls).toHaveLength(3);
    calls[2]!.answer('c');
    expect(await late).toBe('c');
  });

  it('sends a query of its own for a reader arriving when none is in flight', async () => {
    const { calls, query } = controlledQuery();
    const shared = new SharedStampRead(query);
    const first = shared.read();
    calls[0]!.answer('a');
    expect(await first).toBe('a');
    await settle();
    const again = shared.read();
    expect(calls).toHaveLength(2);
    calls[1]!.answer('b');
    expect(await again).toBe('b');
  });

  it('passes a failed query on to its readers and still answers the readers waiting after it', async () => {
    const { calls, query } = controlledQuery();
    const shared = new SharedStampRead(query);
    const first = shared.read();
    const second = shared.read();
    calls[0]!.fail(new Error('connection reset'));
    await expect(first).rejects.toThrow('connection reset');
    await settle();
    expect(calls).toHaveLength(2);
    calls[1]!.answer('after');
    expect(await second).toBe('after');
    await settle();
    const third = shared.read();
    calls[2]!.answer('later');
    expect(await third).toBe('later');
  });
});
