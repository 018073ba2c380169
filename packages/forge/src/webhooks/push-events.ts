/**
 * Events of a push, as Gitea's notifier raises them (services/repository/push.go): a new branch or tag
 * raises `create` and `push`, an updated branch `push`, a deleted branch or tag `delete` only. Push
 * payloads list at most FEED_MAX_COMMITS commits, newest first, with the total in `total_commits`.
 * Reading git happens here, before the transaction that records the events (`raiseHookEvents`).
 */
import { randomUUID } from 'node:crypto';
import { NotFound } from '../errors.js';
import { commitFileChanges } from '../git/commit-files.js';
import { commitsBetween, countCommits, resolveCommit, ZERO_SHA } from '../git/repository.js';
import type { ServiceContext } from '../services/context.js';
import type { RepoContext } from '../services/repo-context.js';
import { requireDoer } from '../services/repo-context.js';
import { insertHookTasks } from '../store/hooks.js';
import { countReleases } from '../store/releases.js';
import { findRepositoryById } from '../store/repositories.js';
import type { RepositoryRow, UserRow, WebhookRow } from '../store/schema.js';
import { wakeDeliveryWorkers } from './outbox.js';
import {
  createEvent,
  deleteEvent,
  type EventRepository,
  type HookEventRecord,
  pushEvent,
  toPayloadCommit,
} from './payloads.js';

/** Gitea's setting.UI.FeedMaxCommitNum, which also bounds push payloads. */
const FEED_MAX_COMMITS = 5;

/** Where a push happened and who pushed. */
export interface PushSource {
  ctx: ServiceContext;
  gitDir: string;
  repo: RepositoryRow;
  owner: UserRow;
  pusher: UserRow;
}

/** How one ref moved. */
export interface PushedRef {
  ref: string;
  oldSha: string;
  newSha: string;
}

/** The repository as it is after the push (its empty flag and default branch may have just changed). */
async function eventRepository(source: Pick<PushSource, 'ctx' | 'repo' | 'owner'>): Promise<EventRepository> {
  const releaseCount = await countReleases(source.ctx.db, { repoId: source.repo.id, includeDrafts: false });
  const repo = (await findRepositoryById(source.ctx.db, source.repo.id)) ?? source.repo;
  return { repo, owner: source.owner, releaseCount };
}

async function payloadCommits(source: PushSource, repo: EventRepository, oldSha: string, newSha: string) {
  const commits = await commitsBetween(source.gitDir, oldSha, newSha, FEED_MAX_COMMITS);
  const usernames = new Map([[source.pusher.email.toLowerCase(), source.pusher.name]]);
  return Promise.all(
    commits.map(async (commit) =>
      toPayloadCommit(
        source.ctx.config,
        repo,
        commit,
        await commitFileChanges(source.gitDir, commit.sha),
        usernames,
      ),
    ),
  );
}

/** The events of a push's ref changes, ready for `raiseHookEvents`. */
export async function preparePushEvents(
  source: PushSource,
  changes: readonly PushedRef[],
): Promise<HookEventRecord[]> {
  const { config } = source.ctx;
  const repo = await eventRepository(source);
  const events: HookEventRecord[] = [];
  for (const change of changes) {
    const isTag = change.ref.startsWith('refs/tags/');
    if (!isTag && !change.ref.startsWith('refs/heads/')) continue;
    if (change.newSha === ZERO_SHA) {
      events.push(deleteEvent(config, repo, source.pusher, change.ref));
      continue;
    }
    if (change.oldSha === ZERO_SHA) {
      events.push(createEvent(config, repo, source.pusher, { fullName: change.ref, sha: change.newSha }));
    }
    const commitSha = isTag ? await resolveCommit(source.gitDir, change.newSha) : change.newSha;
    const commits = isTag || !commitSha ? [] : await payloadCommits(source, repo, change.oldSha, commitSha);
    const total =
      isTag || !commitSha
        ? 0
        : await countCommits(
            source.gitDir,
            change.oldSha === ZERO_SHA ? commitSha : `${change.oldSha}..${commitSha}`,
          );
    const repoPath = `${source.owner.name}/${source.repo.name}`;
    events.push(
      pushEvent(config, repo, source.pusher, {
        ref: change.ref,
        before: change.oldSha,
        after: change.newSha,
        compareUrl:
          change.oldSha === ZERO_SHA || isTag
            ? ''
            : `${config.appUrl}${repoPath}/compare/${change.oldSha}...${change.newSha}`,
        commits,
        total,
      }),
    );
  }
  return events;
}

/**
 * Gitea's test delivery (`POST …/hooks/{id}/tests`): a push of the last commit of `ref` (default branch
 * when empty) to this one hook, whatever it subscribes to and whether or not it is active.
 */
export async function testHook(ctx: RepoContext, hook: WebhookRow, ref: string): Promise<void> {
  const doer = requireDoer(ctx);
  const branch = ref || ctx.repo.default_branch;
  const sha =
    (await resolveCommit(ctx.gitDir, `refs/heads/${branch}`)) ??
    (await resolveCommit(ctx.gitDir, `refs/tags/${branch}`)) ??
    (await resolveCommit(ctx.gitDir, branch));
  if (!sha) throw new NotFound();
  const source: PushSource = { ctx, gitDir: ctx.gitDir, repo: ctx.repo, owner: ctx.owner, pusher: doer };
  const repo = await eventRepository(source);
  const [commit] = await payloadCommits(source, repo, ZERO_SHA, sha);
  const event = pushEvent(ctx.config, repo, doer, {
    ref: `refs/heads/${branch}`,
    before: sha,
    after: sha,
    compareUrl: `${ctx.config.appUrl}${ctx.owner.name}/${ctx.repo.name}/compare/${sha}...${sha}`,
    commits: commit ? [commit] : [],
    total: 1,
  });
  const nowMs = Date.now();
  await insertHookTasks(ctx.db, [
    {
      hook_id: hook.id,
      repo_id: ctx.repo.id,
      uuid: randomUUID(),
      event_type: 'push',
      action: '',
      payload_content: JSON.stringify(event.payload),
      state: 'pending',
      due_ms: nowMs,
      created_unix: Math.floor(nowMs / 1000),
    },
  ]);
  wakeDeliveryWorkers();
}
