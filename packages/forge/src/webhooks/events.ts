/**
 * Webhook event names as Gitea 1.25 accepts and lists them (modules/webhook/type.go,
 * routers/api/v1/utils/hook.go), and which of them the forge raises today.
 */

/** Every event a hook can subscribe to, in the order `Hook.events` lists them. */
export const HOOK_EVENTS = [
  'create',
  'delete',
  'fork',
  'push',
  'issues',
  'issue_assign',
  'issue_label',
  'issue_milestone',
  'issue_comment',
  'pull_request',
  'pull_request_assign',
  'pull_request_label',
  'pull_request_milestone',
  'pull_request_comment',
  'pull_request_review',
  'pull_request_sync',
  'pull_request_review_request',
  'wiki',
  'repository',
  'release',
  'package',
  'status',
  'workflow_run',
  'workflow_job',
] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** The events the forge raises (the others are accepted and stored, as Gitea does, but never fire). */
export type RaisedEvent = 'push' | 'create' | 'delete' | 'release' | 'repository';

const ISSUE_GROUP: HookEvent[] = [
  'issues',
  'issue_assign',
  'issue_label',
  'issue_milestone',
  'issue_comment',
];
const PULL_GROUP: HookEvent[] = [
  'pull_request',
  'pull_request_assign',
  'pull_request_label',
  'pull_request_milestone',
  'pull_request_comment',
  'pull_request_review',
  'pull_request_sync',
  'pull_request_review_request',
];

/**
 * Names a request may send, and what each enables. As in Gitea's API, `issues` and `pull_request`
 * stand for their whole group, `issues_only` / `pull_request_only` for the bare event, and names
 * compare case-insensitively.
 */
const ACCEPTED = new Map<string, HookEvent[]>([
  ...HOOK_EVENTS.map((event): [string, HookEvent[]] => [event, [event]]),
  ['issues', ISSUE_GROUP],
  ['issues_only', ['issues']],
  ['pull_request', PULL_GROUP],
  ['pull_request_only', ['pull_request']],
  ['pull_request_review_approved', ['pull_request_review']],
  ['pull_request_review_rejected', ['pull_request_review']],
  ['pull_request_review_comment', ['pull_request_review']],
]);

/**
 * The events a list from a request enables, in listing order; an empty list means `push` (Gitea's
 * default). Returns the first name that is no event as `unknown` (Gitea ignores it; the forge refuses
 * it, so a typo never silently subscribes to nothing).
 */
export function parseHookEvents(names: readonly string[]): { events: HookEvent[] } | { unknown: string } {
  if (names.length === 0) return { events: ['push'] };
  const enabled = new Set<HookEvent>();
  for (const name of names) {
    const events = ACCEPTED.get(name.toLowerCase());
    if (!events) return { unknown: name };
    for (const event of events) enabled.add(event);
  }
  return { events: HOOK_EVENTS.filter((event) => enabled.has(event)) };
}

/** The stored events of a hook (a JSON array written by the store). */
export function storedHookEvents(json: string): HookEvent[] {
  try {
    const parsed: unknown = JSON.parse(json);
    return Array.isArray(parsed) ? HOOK_EVENTS.filter((event) => parsed.includes(event)) : [];
  } catch {
    return [];
  }
}
