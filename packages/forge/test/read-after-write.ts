/**
 * Concurrent read-after-write checks (issue 35): while a few readers keep asking the same question, a
 * write changes its answer; every read *sent after the write's answer arrived* must reflect the write.
 * Reads in flight while the write runs may see either side and are not judged: they are there to race
 * the write (a password check's scrypt, a token touch), which is what once left old answers kept.
 */

/** One round: the question, the write that changes its answer, and the answer expected after it. */
export interface Round {
  /** Asks once; returns what the answer shows (e.g. `404`, `200 private`). */
  read: () => Promise<string>;
  /** Makes the change; resolves once its answer arrived (and asserts it succeeded). */
  write: () => Promise<void>;
  /** What every read sent after the write's answer must show. */
  after: string;
}

export interface FreshnessResult {
  /** Reads judged (sent after the write's answer). */
  judged: number;
  /** `round i: got X, expected Y` for each stale answer. */
  stale: string[];
}

export interface FreshnessOptions {
  /** Concurrent readers (default 3). */
  readers?: number;
  /** Judged reads each round waits for before it ends (default 6). */
  judgedPerRound?: number;
  /** Reads every round waits for before it writes, so the write lands among reads in flight (default 2). */
  readsBeforeWrite?: number;
}

/**
 * Runs `rounds` rounds, each prepared by `prepare(i)` (which may set up fresh users or tokens, or
 * flip a setting back and forth), and collects every stale judged read.
 */
export async function checkFreshReads(
  rounds: number,
  prepare: (round: number) => Promise<Round>,
  options: FreshnessOptions = {},
): Promise<FreshnessResult> {
  const readers = options.readers ?? 3;
  const judgedPerRound = options.judgedPerRound ?? 6;
  const readsBeforeWrite = options.readsBeforeWrite ?? 2;
  const result: FreshnessResult = { judged: 0, stale: [] };
  for (let i = 0; i < rounds; i += 1) {
    const round = await prepare(i);
    let written = false;
    let stop = false;
    let readsDone = 0;
    let judgedDone = 0;
    let failure: unknown;
    let wake: (() => void) | null = null;
    const waitFor = async (condition: () => boolean) => {
      while (!condition() && failure === undefined) await new Promise<void>((resolve) => (wake = resolve));
      if (failure !== undefined) throw failure;
    };
    const reader = async () => {
      while (!stop && failure === undefined) {
        const judged = written;
        let got: string;
        try {
          got = await round.read();
        } catch (error) {
          failure = error;
          wake?.();
          return;
        }
        readsDone += 1;
        if (judged) {
          judgedDone += 1;
          result.judged += 1;
          if (got !== round.after) result.stale.push(`round ${i}: got ${got}, expected ${round.after}`);
        }
        wake?.();
      }
    };
    const running = Array.from({ length: readers }, reader);
    try {
      await waitFor(() => readsDone >= readsBeforeWrite);
      await round.write();
      written = true;
      await waitFor(() => judgedDone >= judgedPerRound);
    } finally {
      stop = true;
      await Promise.all(running);
    }
  }
  return result;
}
