import { describe, expect, it } from 'vitest';
import { SharedStampRead } from '../src/jobs/shared-stamp-read.js';

/** A query whose answer the test gives by hand, counting how many were sent. */
function manualQueries() {
  const pending: ((value: number) => void)[] = [];
  let sent = 0;
  return {
    query: () =>
      new Promise<number>((resolve) => {
        sent += 1;
        pending.push(resolve);
      }),
    answer: (value: number) => pending.shift()?.(value),
    sent: () => sent,
  };
}

describe('SharedStampRead', () => {
  it('gives a check only a query sent after it asked, shared by every check that arrived meanwhile', async () => {
    const queries = manualQueries();
    const stamp = new SharedStampRead(queries.query);
    const first = stamp.read();
    // Arrived while the first query was in flight: they may not trust it (a revocation may have committed
    // after it was sent), so they wait for one query of their own, sent once the first settles.
    const second = stamp.read();
    const third = stamp.read();
    expect(queries.sent()).toBe(1);
    queries.answer(1);
    await expect(first).resolves.toBe(1);
    await Promise.resolve();
    expect(queries.sent()).toBe(2);
    queries.answer(2);
    await expect(second).resolves.toBe(2);
    await expect(third).resolves.toBe(2);
    // Nothing in flight: the next check sends at once.
    const fourth = stamp.read();
    expect(queries.sent()).toBe(3);
    queries.answer(3);
    await expect(fourth).resolves.toBe(3);
  });

  it('passes a failed query on to its checks and sends the next one anew', async () => {
    let calls = 0;
    const stamp = new SharedStampRead(async () => {
      calls += 1;
      if (calls === 1) throw new Error('connection lost');
      return calls;
    });
    await expect(stamp.read()).rejects.toThrow('connection lost');
    await expect(stamp.read()).resolves.toBe(2);
  });
});
