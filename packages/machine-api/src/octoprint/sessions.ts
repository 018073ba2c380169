/**
 * Sessions of OctoPrint's push channel: `POST api/login` with `{"passive": true}` and a key answers a
 * session, which the app sends back on `/sockjs/websocket` as `{"auth": "name:session"}` (the WebSocket
 * upgrade itself carries no key). A session remembers only the key's name; whoever holds it is checked
 * against the key store again on every frame (`PushSessions.actor`), so revoking the key, or changing its
 * scopes, ends what it sees at once. Sessions live in this process's memory and expire after a day unused.
 */

import { createHash, randomBytes } from 'node:crypto';
import type { KeyService } from '../access/keys.js';
import { type Actor, ANONYMOUS } from '../access/scopes.js';

const SESSION_TTL_MS = 24 * 60 * 60_000;
/** Sessions kept at once; the oldest goes first (each login makes one). */
const MAX_SESSIONS = 1000;
/** The name OctoPrint gives the API key's user when access control is off. */
export const ANONYMOUS_USER = '_api';

interface Session {
  /** The key's name; null when access control is off. */
  keyName: string | null;
  lastUsed: number;
}

export class PushSessions {
  /** SHA-256 of the session token → the session. */
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly keys: KeyService) {}

  /** A new session for the caller of `api/login`. */
  open(actor: Actor): string {
    const session = randomBytes(32).toString('base64url');
    if (this.sessions.size >= MAX_SESSIONS) {
      const oldest = this.sessions.keys().next().value;
      if (oldest !== undefined) this.sessions.delete(oldest);
    }
    this.sessions.set(digest(session), { keyName: actor.name, lastUsed: Date.now() });
    return session;
  }

  /**
   * The actor an `auth` message stands for, read afresh from the key store; null for a wrong or expired
   * session, a name that does not match it, or a key revoked since.
   */
  async actor(auth: string): Promise<Actor | null> {
    const colon = auth.lastIndexOf(':');
    if (colon < 0) return null;
    const name = auth.slice(0, colon);
    const token = auth.slice(colon + 1);
    // Looked up by digest: the map never compares the secret itself.
    const found = this.sessions.get(digest(token));
    if (!found) return null;
    if (name !== (found.keyName ?? ANONYMOUS_USER)) return null;
    if (Date.now() - found.lastUsed > SESSION_TTL_MS) {
      this.sessions.delete(digest(token));
      return null;
    }
    found.lastUsed = Date.now();
    if (found.keyName === null) return ANONYMOUS;
    return this.keys.actorNamed(found.keyName);
  }
}

function digest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('base64url');
}
