/**
 * Slack, Discord and Microsoft Teams bodies, rendered at delivery time from the stored Gitea payload
 * the way Gitea's services/webhook/{slack,discord,msteams}.go word them: one title line per event
 * (`[owner/repo:branch] 2 new commits pushed by alice`), commit lines for pushes, Gitea's colors.
 */
import type { PayloadCommit } from '../structs/hook.js';
import type { SlackMeta } from './hook-types.js';

const GREEN = 0x1ac600;
const YELLOW = 0xffd930;
const RED = 0xff3232;

interface Message {
  title: string;
  url: string;
  text: string;
  color: number;
  /** Commit lines of a push as [sha7, url, message, author]. */
  commits: Array<[string, string, string, string]>;
  repoName: string;
  repoUrl: string;
  sender: string;
  senderAvatar: string;
}

// biome-ignore lint/suspicious/noExplicitAny: stored payloads are read field by field, as Gitea's payloaders do.
type Payload = Record<string, any>;

/** The common reading of an event every chat format renders. */
function messageOf(event: string, payload: Payload): Message {
  const repo = payload.repository ?? {};
  const base = {
    url: repo.html_url ?? '',
    text: '',
    color: GREEN,
    commits: [] as Message['commits'],
    repoName: repo.full_name ?? '',
    repoUrl: repo.html_url ?? '',
    sender: payload.sender?.login ?? '',
    senderAvatar: payload.sender?.avatar_url ?? '',
  };
  switch (event) {
    case 'push': {
      const branch = String(payload.ref ?? '').replace(/^refs\/(heads|tags)\//, '');
      const count = payload.total_commits ?? 0;
      const commits = (payload.commits ?? []) as PayloadCommit[];
      return {
        ...base,
        title: `[${base.repoName}:${branch}] ${count} new commit${count === 1 ? '' : 's'}`,
        url: payload.compare_url || base.url,
        commits: commits.map((c) => [c.id.slice(0, 7), c.url, c.message.split('\n')[0] ?? '', c.author.name]),
      };
    }
    case 'create':
      return { ...base, title: `[${base.repoName}] ${payload.ref_type} ${payload.ref} created` };
    case 'delete':
      return { ...base, title: `[${base.repoName}] ${payload.ref_type} ${payload.ref} deleted`, color: RED };
    case 'release': {
      const verb = payload.action === 'published' ? 'created' : payload.action;
      return {
        ...base,
        title: `[${base.repoName}] Release ${verb}: ${payload.release?.tag_name ?? ''}`,
        url: payload.release?.html_url ?? base.url,
        text: payload.action === 'deleted' ? '' : (payload.release?.body ?? ''),
        color: payload.action === 'deleted' ? RED : payload.action === 'updated' ? YELLOW : GREEN,
      };
    }
    case 'repository':
      return {
        ...base,
        title: `[${base.repoName}] Repository ${payload.action}`,
        color: payload.action === 'deleted' ? RED : GREEN,
      };
    default:
      return { ...base, title: `[${base.repoName}] ${event}` };
  }
}

/** Gitea's SlackPayload: `<url|text>` links, commit lines in one attachment. */
export function slackBody(event: string, payload: Payload, meta: SlackMeta): object {
  const message = messageOf(event, payload);
  const title = `<${message.url}|${message.title}>${message.sender ? ` by ${message.sender}` : ''}`;
  const lines = message.commits.map(([sha, url, text, author]) => `<${url}|${sha}>: ${text} - ${author}`);
  const details = [message.text, ...lines].filter(Boolean).join('\n');
  return {
    channel: meta.channel,
    text: title,
    username: meta.username,
    icon_url: meta.icon_url,
    attachments: details
      ? [{ fallback: message.title, color: meta.color || `#${message.color.toString(16)}`, text: details }]
      : [],
  };
}

/** Gitea's DiscordPayload: one embed with title, link, description and color. */
export function discordBody(event: string, payload: Payload): object {
  const message = messageOf(event, payload);
  const lines = message.commits.map(([sha, url, text, author]) => `[${sha}](${url}) ${text} - ${author}`);
  return {
    wait: false,
    content: '',
    username: '',
    avatar_url: '',
    tts: false,
    embeds: [
      {
        title: message.title,
        description: [message.text, ...lines].filter(Boolean).join('\n'),
        url: message.url,
        color: message.color,
        author: { name: message.sender, url: '', icon_url: message.senderAvatar },
      },
    ],
  };
}

/** Gitea's MSTeamsPayload: a MessageCard with a section of facts and an "open" action. */
export function msteamsBody(event: string, payload: Payload): object {
  const message = messageOf(event, payload);
  const lines = message.commits.map(([sha, url, text, author]) => `[${sha}](${url}) ${text} - ${author}`);
  return {
    '@type': 'MessageCard',
    '@context': 'https://schema.org/extensions',
    themeColor: message.color.toString(16),
    title: message.title,
    summary: message.title,
    sections: [
      {
        activityTitle: message.sender,
        activitySubtitle: message.sender,
        activityImage: message.senderAvatar,
        text: [message.text, ...lines].filter(Boolean).join('\n\n'),
        facts: [
          { name: 'Repository:', value: message.repoName },
          { name: 'Event:', value: event },
        ],
      },
    ],
    potentialAction: [
      { '@type': 'OpenUri', name: 'View in browser', targets: [{ os: 'default', uri: message.url }] },
    ],
  };
}
