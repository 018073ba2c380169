/**
 * Writes to one repository's refs from this process run one at a time: a git push (whose before/after
 * ref snapshots must be its own, or another write would be reported as part of it) and a contents-API
 * commit take turns. Other processes are kept out by git itself: every ref update names the value it
 * expects (`update-ref <new> <old>`), so a write that lost a race changes nothing and is retried or refused.
 */
const queues = new Map<number, Promise<unknown>>();

/** Runs `work` after every earlier write to `repoId` from this process has settled. */
export function serialiseRepoWrite<T>(repoId: number, work: () => Promise<T>): Promise<T> {
  const previous = queues.get(repoId) ?? Promise.resolve();
  const next = previous.then(work, work);
  const tail = next.catch(() => undefined);
  queues.set(repoId, tail);
  void tail.then(() => {
    if (queues.get(repoId) === tail) queues.delete(repoId);
  });
  return next;
}
