/**
 * Slack, Discord and Microsoft Teams bodies, rendered at delivery time from the stored Gitea payload as
 * Gitea's services/webhook/{slack,discord,msteams}.go and general.go build them: the same titles
 * (`[owner/repo:branch] 2 new commits`), links, commit lines, facts, colors and field names, so a
 * channel fed by forge reads as one fed by Gitea.
 */
import type { SlackMeta } from './hook-types.js';

const GREEN = 0x1ac600;
const YELLOW = 0xffd930;
const RED = 0xff3232;

// biome-ignore lint/suspicious/noExplicitAny: stored payloads are read field by field, as Gitea's convertors do.
type Payload = Record<string, any>;
type LinkFormatter = (url: string, text: string) => string;

const noLink: LinkFormatter = (_url, text) => text;
/** Gitea's util.PathEscapeSegments: each path segment escaped, the slashes kept. */
const escapeSegments = (path: string) => path.split('/').map(encodeURIComponent).join('/');
/** Gitea's git.RefName(ref).ShortName() for the refs forge raises events for. */
const shortRef = (ref: string) => ref.replace(/^refs\/(heads|tags)\//, '');

/** Gitea's getReleasePayloadInfo: the release line and its color. */
function releaseInfo(payload: Payload, link: LinkFormatter, withSender: boolean): [string, number] {
  const repo = payload.repository ?? {};
  const tag = String(payload.release?.tag_name ?? '');
  const repoLink = link(repo.html_url, repo.full_name);
  const refLink = link(`${repo.html_url}/releases/tag/${escapeSegments(tag)}`, tag);
  const [verb, color] =
    payload.action === 'updated'
      ? ['updated', YELLOW]
      : payload.action === 'deleted'
        ? ['deleted', RED]
        : ['created', GREEN];
  let text = `[${repoLink}] Release ${verb}: ${refLink}`;
  if (withSender) text += ` by ${senderLink(payload, link)}`;
  return [text, color];
}

function senderLink(payload: Payload, link: LinkFormatter): string {
  const login = String(payload.sender?.login ?? '');
  return link(String(payload.sender?.html_url ?? ''), login);
}

/** "1 new commit" / "N new commits", counted as Gitea counts them (total_commits). */
function commitCount(payload: Payload): string {
  const total = Number(payload.total_commits ?? 0);
  return total === 1 ? '1 new commit' : `${total} new commits`;
}

/** The title link of a push in Discord and Teams: the one commit, else the comparison, else the branch. */
function pushLink(payload: Payload): string {
  const repo = payload.repository ?? {};
  const commits: Payload[] = payload.commits ?? [];
  const link = Number(payload.total_commits) === 1 ? (commits[0]?.url ?? '') : (payload.compare_url ?? '');
  return link || `${repo.html_url}/src/${escapeSegments(shortRef(String(payload.ref ?? '')))}`;
}

// ---- Slack ----

/** Gitea's SlackTextFormatter. */
const slackText = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
const slackLink: LinkFormatter = (url, text) => `<${url}|${slackText(text)}>`;

/** Gitea's git.RefURL: a branch (or a short name) under src/branch, a tag under src/tag. */
function slackRefLink(repoUrl: string, ref: string): string {
  const name = escapeSegments(shortRef(ref));
  const kind = ref.startsWith('refs/tags/') ? 'tag' : 'branch';
  return slackLink(`${repoUrl}/src/${kind}/${name}`, shortRef(ref));
}

/** Gitea's SlackPayload. */
export function slackBody(event: string, payload: Payload, meta: SlackMeta): object {
  const repo = payload.repository ?? {};
  const repoLink = slackLink(repo.html_url, repo.full_name);
  let text = '';
  let attachments: object[] | null = null;
  switch (event) {
    case 'push': {
      const count = commitCount(payload);
      const commitString = payload.compare_url ? slackLink(payload.compare_url, count) : count;
      const branchLink = slackRefLink(repo.html_url, String(payload.ref ?? ''));
      text = `[${repoLink}:${branchLink}] ${commitString} pushed by ${payload.pusher?.login ?? ''}`;
      const lines = ((payload.commits ?? []) as Payload[]).map(
        (c) =>
          `${slackLink(c.url, String(c.id).slice(0, 7))}: ${slackText(String(c.message).split('\n')[0] ?? '')} - ${slackText(String(c.author?.name ?? ''))}`,
      );
      attachments = [
        {
          fallback: '',
          color: meta.color,
          title: repo.html_url,
          title_link: repo.html_url,
          text: lines.join('\n'),
        },
      ];
      break;
    }
    case 'create':
      text = `[${repoLink}:${slackRefLink(repo.html_url, String(payload.ref))}] ${payload.ref_type} created by ${payload.sender?.login ?? ''}`;
      break;
    case 'delete':
      text = `[${repoLink}:${shortRef(String(payload.ref))}] ${payload.ref_type} deleted by ${payload.sender?.login ?? ''}`;
      break;
    case 'release':
      text = releaseInfo(payload, slackLink, true)[0];
      break;
    case 'repository':
      text = `[${repoLink}] Repository ${payload.action} by ${senderLink(payload, slackLink)}`;
      break;
  }
  return {
    channel: meta.channel,
    text,
    username: meta.username,
    icon_url: meta.icon_url,
    unfurl_links: 0,
    link_names: 0,
    attachments,
  };
}

// ---- Discord ----

/** Gitea's commit summary in Discord: the first line, at most 50 characters (47 and "..."). */
function discordSummary(message: string): string {
  const first = (message.split('\n')[0] ?? '').replace(/\r+$/, '');
  const chars = [...first];
  return chars.length > 50 ? `${chars.slice(0, 47).join('')}...` : first;
}

/** Gitea's DiscordPayload (no per-hook username or avatar: forge keeps no Discord meta). */
export function discordBody(event: string, payload: Payload): object {
  const repo = payload.repository ?? {};
  const refUrl = `${repo.html_url}/src/${escapeSegments(shortRef(String(payload.ref ?? '')))}`;
  let title = '';
  let description = '';
  let url = '';
  let color = GREEN;
  switch (event) {
    case 'push': {
      title = `[${repo.full_name}:${shortRef(String(payload.ref ?? ''))}] ${commitCount(payload)}`;
      url = pushLink(payload);
      description = ((payload.commits ?? []) as Payload[])
        .map(
          (c) =>
            `[${String(c.id).slice(0, 7)}](${c.url}) ${discordSummary(String(c.message))} - ${c.author?.name ?? ''}`,
        )
        .join('\n');
      break;
    }
    case 'create':
      title = `[${repo.full_name}] ${payload.ref_type} ${shortRef(String(payload.ref))} created`;
      url = refUrl;
      break;
    case 'delete':
      title = `[${repo.full_name}] ${payload.ref_type} ${shortRef(String(payload.ref))} deleted`;
      url = refUrl;
      color = RED;
      break;
    case 'release':
      [title, color] = releaseInfo(payload, noLink, false);
      description = String(payload.release?.body ?? '');
      url = String(payload.release?.html_url ?? '');
      break;
    case 'repository':
      title = `[${repo.full_name}] Repository ${payload.action}`;
      url = payload.action === 'created' ? repo.html_url : '';
      color = payload.action === 'created' ? GREEN : RED;
      break;
  }
  return {
    wait: false,
    content: '',
    username: '',
    tts: false,
    embeds: [
      {
        title,
        description,
        url,
        color,
        footer: { text: '' },
        author: {
          name: payload.sender?.login ?? '',
          url: payload.sender?.html_url ?? '',
          icon_url: payload.sender?.avatar_url ?? '',
        },
        fields: null,
      },
    ],
  };
}

// ---- Microsoft Teams ----

/** Gitea's MSTeamsPayload: a MessageCard with the sender, facts and a "View in Gitea" link. */
export function msteamsBody(event: string, payload: Payload): object {
  const repo = payload.repository ?? {};
  const refName = shortRef(String(payload.ref ?? ''));
  const refUrl = `${repo.html_url}/src/${escapeSegments(refName)}`;
  let title = '';
  let text = '';
  let target = '';
  let color = GREEN;
  let fact: { name: string; value: string } | null = null;
  switch (event) {
    case 'push':
      title = `[${repo.full_name}:${refName}] ${commitCount(payload)}`;
      target = pushLink(payload);
      text = ((payload.commits ?? []) as Payload[])
        .map(
          (c) =>
            `[${String(c.id).slice(0, 7)}](${c.url}) ${String(c.message).replace(/[\r\n]+$/, '')} - ${c.author?.name ?? ''}`,
        )
        .join('\n\n');
      fact = { name: 'Commit count:', value: String(payload.total_commits ?? 0) };
      break;
    case 'create':
    case 'delete':
      title = `[${repo.full_name}] ${payload.ref_type} ${refName} ${event === 'create' ? 'created' : 'deleted'}`;
      target = refUrl;
      color = event === 'create' ? GREEN : YELLOW;
      fact = { name: `${payload.ref_type}:`, value: refName };
      break;
    case 'release':
      [title, color] = releaseInfo(payload, noLink, false);
      target = String(payload.release?.url ?? '');
      fact = { name: 'Tag:', value: String(payload.release?.tag_name ?? '') };
      break;
    case 'repository':
      title = `[${repo.full_name}] Repository ${payload.action}`;
      target = payload.action === 'created' ? repo.html_url : '';
      color = payload.action === 'created' ? GREEN : YELLOW;
      break;
  }
  return {
    '@type': 'MessageCard',
    '@context': 'https://schema.org/extensions',
    themeColor: color.toString(16),
    title,
    summary: title,
    sections: [
      {
        activityTitle: payload.sender?.full_name ?? '',
        activitySubtitle: payload.sender?.login ?? '',
        activityImage: payload.sender?.avatar_url ?? '',
        facts: [{ name: 'Repository:', value: repo.full_name ?? '' }, ...(fact ? [fact] : [])],
        text,
      },
    ],
    potentialAction: [
      { '@type': 'OpenUri', name: 'View in Gitea', targets: [{ os: 'default', uri: target }] },
    ],
  };
}
