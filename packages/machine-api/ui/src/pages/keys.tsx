/**
 * `/ui/keys` (admin scope): the service's API keys: create one (its secret is shown here once and never
 * again), list them, revoke one. Without the admin scope the service answers 403 and the page says so.
 */

import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must, type Schemas } from '../api/client';
import { ConfirmButton } from '../components/confirm';
import { when } from '../format';
import { useTitle } from '../title';

type Scope = Schemas['ApiKeyScope'];
type ApiKey = Schemas['ApiKey'];
type CreatedKey = Schemas['CreatedApiKey'];

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

  const reload = () =>
    must(api.GET('/keys')).then(
      (list) => {
        setKeys(list);
        setError(null);
      },
      (e) => setError(errorText(e)),
    );
  useEffect(() => {
    void reload();
  }, []);

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
