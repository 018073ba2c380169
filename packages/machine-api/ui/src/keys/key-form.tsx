/** The form that creates an API key: its name and its scopes, each with what it allows. */

import { useState } from 'preact/hooks';
import type { Keys, Scope } from './use-keys';

const SCOPES: { scope: Scope; what: string }[] = [
  { scope: 'read', what: 'see machines, jobs and events' },
  { scope: 'print', what: 'send and queue prints, cancel its own jobs' },
  { scope: 'control', what: 'pause, resume, stop and clear machines; any job' },
  { scope: 'clear', what: 'only confirm a clear bed (a sensor, an automation)' },
  { scope: 'admin', what: 'manage keys' },
];

export function KeyForm({ create }: { create: Keys['create'] }) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(['read']);

  const submit = (event: Event) => {
    event.preventDefault();
    void create(name, scopes, () => setName(''));
  };
  const toggle = (scope: Scope, on: boolean) =>
    setScopes((current) => (on ? [...current, scope] : current.filter((entry) => entry !== scope)));

  return (
    <form class="stack" onSubmit={submit}>
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
  );
}
