/**
 * The keys page's data: the API keys, the apps asking for one (read again every few seconds, an app polls
 * for about a minute), the key just created (its secret is shown once), and the last error.
 */

import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must, type Schemas } from '../api/client';

export type Scope = Schemas['ApiKeyScope'];
export type ApiKey = Schemas['ApiKey'];
export type CreatedKey = Schemas['CreatedApiKey'];
export type KeyRequest = Schemas['AppKeyRequest'];

/** How often the page looks for new app requests while it is open (an app polls for about a minute). */
const REQUESTS_REFRESH_MS = 3000;

export interface Keys {
  keys: ApiKey[] | null;
  requests: KeyRequest[];
  created: CreatedKey | null;
  error: string | null;
  /** Approves or denies an app's request. */
  decide(id: string, approve: boolean): Promise<void>;
  /** Creates a key; `onCreated` runs once the service has answered with it, before the list is read again. */
  create(name: string, scopes: Scope[], onCreated: () => void): Promise<void>;
  revoke(name: string): Promise<void>;
}

export function useKeys(): Keys {
  const [keys, setKeys] = useState<ApiKey[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [requests, setRequests] = useState<KeyRequest[]>([]);

  const reload = () =>
    must(api.GET('/keys')).then(
      (list) => {
        setKeys(list);
        setError(null);
      },
      (e) => setError(errorText(e)),
    );
  const reloadRequests = () => must(api.GET('/keys/requests')).then(setRequests, () => setRequests([]));
  useEffect(() => {
    void reload();
    void reloadRequests();
    const timer = setInterval(() => void reloadRequests(), REQUESTS_REFRESH_MS);
    return () => clearInterval(timer);
  }, []);

  const decide = async (id: string, approve: boolean) => {
    setError(null);
    try {
      const path = { params: { path: { id } } };
      if (approve) await must(api.POST('/keys/requests/{id}/approve', { ...path, body: {} }));
      else await must(api.POST('/keys/requests/{id}/deny', path));
      await Promise.all([reload(), reloadRequests()]);
    } catch (e) {
      setError(errorText(e));
    }
  };

  const create = async (name: string, scopes: Scope[], onCreated: () => void) => {
    setError(null);
    setCreated(null);
    try {
      setCreated(await must(api.POST('/keys', { body: { name, scopes } })));
      onCreated();
      await reload();
    } catch (e) {
      setError(errorText(e));
    }
  };

  const revoke = async (keyName: string) => {
    try {
      await must(api.DELETE('/keys/{name}', { params: { path: { name: keyName } } }));
      await reload();
    } catch (e) {
      setError(errorText(e));
    }
  };

  return { keys, requests, created, error, decide, create, revoke };
}
