/**
 * OctoPrint's Application Keys flow, as Home Assistant, OctoPod and OctoApp run it: an app without a key
 * asks for one (`plugin/appkeys/request`), polls with the token in the answer's `Location`, and gets the
 * key once an administrator approves the request (`/keys/requests`, the dashboard). The key is a normal
 * scoped API key named after the app.
 *
 * Nothing stored can be used as a credential: the database keeps the SHA-256 of the polling token and of
 * the eventual key's secret. The key's text is made when the app asks and kept in this process's memory
 * only, until the app fetches it (exactly once) or the request ends. A request approved but never fetched
 * (the app gave up, or the process restarted and lost the text) has its key removed when it expires.
 */

import { createHash, randomBytes } from 'node:crypto';
import { BadRequest, NotFound, ServiceError } from '../errors.js';
import type { AppKeyRequestRow, AppKeyRequestStore } from './app-key-store.js';
import { generateKey } from './key-secret.js';
import type { KeyInfo, KeyService } from './keys.js';
import { parseScopes, type Scope } from './scopes.js';

/** How long a request waits for a decision, and then for the app to fetch its key. */
export const APP_KEY_REQUEST_TTL_MS = 5 * 60_000;
/** Requests waiting at once; more are refused, so an unauthenticated caller cannot fill the table. */
export const MAX_PENDING_APP_KEY_REQUESTS = 50;
/** Scopes an approval grants when the administrator names none: what Home Assistant and the apps use. */
export const DEFAULT_APP_KEY_SCOPES: readonly Scope[] = ['read', 'control'];

const LABEL_MAX = 100;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
const CONTROL = /[\u0000-\u001f\u007f]/;
const POLL_TOKEN = /^[A-Za-z0-9_-]{43}$/;

class TooManyRequests extends ServiceError {
  constructor(message: string) {
    super(429, 'TooManyRequests', message);
  }
}

export interface AppKeyRequestInfo {
  id: string;
  app: string;
  user: string | null;
  machineId: string;
  createdAt: string;
  expiresAt: string;
}

/** What a poll finds: still waiting, or the key (handed out this once). */
export type AppKeyPoll = { state: 'pending' } | { state: 'approved'; apiKey: string };

export class AppKeyRequests {
  /** Request id → the key text the app will get; never written anywhere. */
  private readonly texts = new Map<string, string>();

  constructor(
    private readonly store: AppKeyRequestStore,
    private readonly keys: KeyService,
  ) {}

  /** Records a request from `app` through the OctoPrint base of `machineId`; returns the polling token. */
  async request(app: unknown, user: unknown, machineId: string): Promise<{ pollToken: string }> {
    const appName = label(app, 'app');
    if (appName === null)
      throw new BadRequest('"app" is required: the name of the application asking for a key');
    const userLabel = label(user, 'user');
    const now = new Date();
    await this.sweep(now);
    if ((await this.store.countPending(now.toISOString())) >= MAX_PENDING_APP_KEY_REQUESTS) {
      throw new TooManyRequests(
        `${MAX_PENDING_APP_KEY_REQUESTS} key requests already wait for a decision; decide or let them expire first`,
      );
    }
    const pollToken = randomBytes(32).toString('base64url');
    const key = generateKey();
    const id = randomBytes(8).toString('hex');
    await this.store.insert({
      id,
      poll_hash: sha256(pollToken),
      app: appName,
      user_label: userLabel,
      machine_id: machineId,
      status: 'pending',
      key_id: key.id,
      key_hash: key.hash,
      key_name: null,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + APP_KEY_REQUEST_TTL_MS).toISOString(),
    });
    this.texts.set(id, key.text);
    return { pollToken };
  }

  /** What the app's poll finds; `NotFound` when denied, expired, already fetched or unknown. */
  async poll(pollToken: string): Promise<AppKeyPoll> {
    const gone = new NotFound(
      'no such key request: it was denied, has expired, or its key was already fetched',
    );
    if (!POLL_TOKEN.test(pollToken)) throw gone;
    const now = new Date();
    await this.sweep(now);
    const row = await this.store.byPollHash(sha256(pollToken));
    if (!row || row.status === 'denied') throw gone;
    if (row.status === 'pending') return { state: 'pending' };
    const text = this.texts.get(row.id);
    // Only the process that took the request holds the text; the row goes either way, so the key is
    // handed out at most once.
    if (!(await this.store.delete(row.id))) throw gone;
    this.texts.delete(row.id);
    if (text === undefined) {
      await this.keys.revokeKeyId(row.key_id);
      throw gone;
    }
    return { state: 'approved', apiKey: text };
  }

  /** Requests waiting for a decision, oldest first. */
  async list(): Promise<AppKeyRequestInfo[]> {
    const now = new Date();
    await this.sweep(now);
    return (await this.store.pending(now.toISOString())).map(info);
  }

  /** Creates the app's key with `scopes` (default read + control); `NotFound` unless pending. */
  async approve(id: string, scopeNames: readonly string[] | undefined): Promise<KeyInfo> {
    let scopes: Scope[];
    try {
      scopes = scopeNames === undefined ? [...DEFAULT_APP_KEY_SCOPES] : parseScopes(scopeNames);
    } catch (error) {
      throw new BadRequest((error as Error).message);
    }
    const row = await this.pendingRow(id);
    const key = await this.keys.adopt(
      { id: row.key_id, hash: row.key_hash, text: '' },
      keyNameFor(row.app),
      scopes,
    );
    if (!(await this.store.decide(id, 'approved', key.name, new Date().toISOString()))) {
      // Denied or expired in between: the key must not outlive the request.
      await this.keys.revokeKeyId(row.key_id);
      throw notPending(id);
    }
    return key;
  }

  /** Refuses the request; the app's next poll gets 404. */
  async deny(id: string): Promise<void> {
    await this.pendingRow(id);
    if (!(await this.store.decide(id, 'denied', null, new Date().toISOString()))) throw notPending(id);
    this.texts.delete(id);
  }

  private async pendingRow(id: string): Promise<AppKeyRequestRow> {
    const row = await this.store.byId(id);
    if (row?.status !== 'pending' || row.expires_at <= new Date().toISOString()) throw notPending(id);
    return row;
  }

  /** Removes expired requests, and the key of any approved one its app never fetched. */
  private async sweep(now: Date): Promise<void> {
    for (const row of await this.store.expired(now.toISOString())) {
      if (!(await this.store.delete(row.id))) continue;
      this.texts.delete(row.id);
      if (row.status === 'approved') await this.keys.revokeKeyId(row.key_id);
    }
  }
}

function notPending(id: string): NotFound {
  return new NotFound(`no pending key request "${id}" (decided, expired, or never made)`);
}

function info(row: AppKeyRequestRow): AppKeyRequestInfo {
  return {
    id: row.id,
    app: row.app,
    user: row.user_label,
    machineId: row.machine_id,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

/** A name an app gives itself, checked: a short line of text, or null when absent. */
function label(value: unknown, field: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new BadRequest(`"${field}" must be a string`);
  const text = value.trim();
  if (text === '') return null;
  if (text.length > LABEL_MAX || CONTROL.test(text)) {
    throw new BadRequest(
      `"${field}" must be at most ${LABEL_MAX} characters of text without control characters`,
    );
  }
  return text;
}

/** The key's name: the app's name in the characters key names allow (`Home Assistant` → `Home-Assistant`). */
export function keyNameFor(app: string): string {
  const name = app
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+|-+$/g, '')
    .slice(0, 56);
  return name === '' ? 'app' : name;
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
