/**
 * `/ui/keys` (admin scope): the service's API keys: create one (its secret is shown here once and never
 * again), list them, revoke one; and the apps asking for a key through OctoPrint's Application Keys flow
 * (Home Assistant, OctoPod, OctoApp), to approve or deny. Without the admin scope the service answers 403
 * and the page says so.
 */

import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must, type Schemas } from '../api/client';
import { ConfirmButton } from '../components/confirm';
import { when } from '../format';
import { useTitle } from '../title';

type Scope = Schemas['ApiKeyScope'];
type ApiKey = Schemas['ApiKey'];
type CreatedKey = Schemas['CreatedApiKey'];
type KeyRequest = Schemas['AppKeyRequest'];

/** How often the page looks for new app requests while it is open (an app polls for about a minute). */
const REQUESTS_REFRESH_MS = 3000;

const SCOPES: { scope: Scope; what: string }[] = [
  { scope: 'read', what: 'see machines, jobs and events' },
  { scope: 'print', what: 'send and queue prints, cancel its own jobs' },
  { scope: 'control', what: 'pause, resume, stop and clear machines; any job' },
  { scope: 'clear', what: 'only confirm a clear bed (a sensor, an automation)' },
  { scope: 'admin', what: 'manage keys' },
];

export function Keys() {
  useTitle('API keys');
  const [keys, setKeys] = useState<ApiKey[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(['read']);
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

  const create = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setCreated(null);
    try {
      setCreated(await must(api.POST('/keys', { body: { name, scopes } })));
      setName('');
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

  const toggle = (scope: Scope, on: boolean) =>
    setScopes((current) => (on ? [...current, scope] : current.filter((entry) => entry !== scope)));

  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">API keys</h1>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {created && (
        <div class="notice" role="status">
          <p>
            Key <strong>{created.name}</strong> created. Copy it now: it is not shown again.
          </p>
          <p class="key-once" data-field="new-key">
            {created.key}
          </p>
        </div>
      )}
      {requests.length > 0 && (
        <section aria-labelledby="requests-title" class="notice">
          <h2 id="requests-title">Apps asking for a key</h2>
          <p>Approving gives the app a key named after it, with the read and control scopes.</p>
          <ul class="stack">
            {requests.map((request) => (
              <li key={request.id} data-request={request.id}>
                <strong>{request.app}</strong>
                {request.user ? ` for ${request.user}` : ''} on <code>{request.machine_id}</code>, asked{' '}
                {when(request.created_at)}{' '}
                <button type="button" class="primary" onClick={() => decide(request.id, true)}>
                  Approve
                </button>{' '}
                <button type="button" class="danger" onClick={() => decide(request.id, false)}>
                  Deny
                </button>
              </li>
            ))}
          </ul>
        </section>
      )}
      <form class="stack" onSubmit={create}>
        <h2>New key</h2>
        <label>
          Name
          <input
            name="name"
            required
            pattern="[A-Za-z0-9._\-]+"
            value={name}
            onInput={(event) => setName((event.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <fieldset>
          <legend>Scopes</legend>
          {SCOPES.map(({ scope, what }) => (
            <label key={scope} class="check">
              <input
                type="checkbox"
                name="scopes"
                value={scope}
                checked={scopes.includes(scope)}
                onChange={(event) => toggle(scope, (event.currentTarget as HTMLInputElement).checked)}
              />
              <span>
                <strong>{scope}</strong>: {what}
              </span>
            </label>
          ))}
        </fieldset>
        <div>
          <button type="submit" class="primary" disabled={scopes.length === 0}>
            Create key
          </button>
        </div>
      </form>
      <h2>Keys</h2>
      {keys === null && !error && <p aria-busy="true">Loading…</p>}
      {keys?.length === 0 && <p>No keys yet.</p>}
      {keys && keys.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Scopes</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.map((key) => (
                <tr key={key.name} data-key={key.name}>
                  <td>{key.name}</td>
                  <td>{key.scopes.join(', ')}</td>
                  <td>{when(key.created_at)}</td>
                  <td>
                    <ConfirmButton
                      label="Revoke"
                      class="danger"
                      question={`Revoke the key ${key.name}?`}
                      detail="Whoever uses it is refused from their next request on. This cannot be undone."
                      confirmLabel="Revoke key"
                      onConfirm={() => revoke(key.name)}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
